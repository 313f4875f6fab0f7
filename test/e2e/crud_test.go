package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"
)

const conflictMessage = `Operation cannot be fulfilled on configmaps "%s": the object has been modified; please apply your changes to the latest version and try again`

func TestCreateGetListUpdate(t *testing.T) {
	e := start(t)
	ns := e.namespace(t)
	cms := e.c.CoreV1().ConfigMaps(ns)
	created := e.configMap(t, ns, "a", map[string]string{"app": "x"})
	if created.UID == "" || created.ResourceVersion == "" || created.CreationTimestamp.IsZero() || created.Namespace != ns {
		t.Fatalf("created object lacks server fields: %+v", created.ObjectMeta)
	}
	got, err := cms.Get(ctx(t), "a", metav1.GetOptions{})
	if err != nil || got.ResourceVersion != created.ResourceVersion || got.Data["k"] != "v" {
		t.Fatalf("get = %+v, %v", got, err)
	}
	list, err := cms.List(ctx(t), metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "a" || list.ResourceVersion == "" {
		t.Fatalf("list = %+v, %v", list, err)
	}

	got.Data["k"] = "w"
	updated, err := cms.Update(ctx(t), got, metav1.UpdateOptions{})
	if err != nil || updated.Data["k"] != "w" || updated.ResourceVersion == got.ResourceVersion || updated.UID != created.UID {
		t.Fatalf("update = %+v, %v", updated, err)
	}
	// The old resourceVersion is stale now.
	got.Data["k"] = "stale"
	_, err = cms.Update(ctx(t), got, metav1.UpdateOptions{})
	wantStatus(t, err, 409, metav1.StatusReasonConflict, fmt.Sprintf(conflictMessage, "a"))

	// An update without resourceVersion is unconditional for config maps.
	got.ResourceVersion = ""
	got.Data["k"] = "forced"
	if _, err := cms.Update(ctx(t), got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("unconditional update: %v", err)
	}
	_, err = cms.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
	wantStatus(t, err, 409, metav1.StatusReasonAlreadyExists, `configmaps "a" already exists`)
	_, err = cms.Update(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "missing"}}, metav1.UpdateOptions{})
	wantStatus(t, err, 404, metav1.StatusReasonNotFound, `configmaps "missing" not found`)

	gen, err := cms.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "gen-"}}, metav1.CreateOptions{})
	if err != nil || len(gen.Name) != len("gen-")+5 {
		t.Fatalf("generateName create = %v, %v", gen.Name, err)
	}
}

func TestPatch(t *testing.T) {
	e := start(t)
	ns := e.namespace(t)
	cms := e.c.CoreV1().ConfigMaps(ns)
	e.configMap(t, ns, "p", nil)
	patch := func(pt types.PatchType, body string) (*corev1.ConfigMap, error) {
		return cms.Patch(ctx(t), "p", pt, []byte(body), metav1.PatchOptions{})
	}
	out, err := patch(types.JSONPatchType, `[{"op":"add","path":"/data/j","value":"json"}]`)
	if err != nil || out.Data["j"] != "json" || out.Data["k"] != "v" {
		t.Fatalf("JSON patch = %v, %v", out.Data, err)
	}
	out, err = patch(types.MergePatchType, `{"data":{"k":null,"m":"merge"},"metadata":{"finalizers":["a.io/x"]}}`)
	if err != nil || out.Data["m"] != "merge" || out.Data["k"] != "" || len(out.Data) != 2 {
		t.Fatalf("merge patch = %v, %v", out.Data, err)
	}
	// Strategic merge patch merges finalizers (a list with patchStrategy
	// merge) where a merge patch replaces the list.
	out, err = patch(types.StrategicMergePatchType, `{"metadata":{"finalizers":["b.io/x"]}}`)
	if err != nil || !sets.New(out.Finalizers...).Equal(sets.New("a.io/x", "b.io/x")) {
		t.Fatalf("strategic merge patch finalizers = %v, %v", out.Finalizers, err)
	}
	out, err = patch(types.MergePatchType, `{"metadata":{"finalizers":null}}`)
	if err != nil || len(out.Finalizers) != 0 {
		t.Fatalf("merge patch finalizers = %v, %v", out.Finalizers, err)
	}

	_, err = patch(types.JSONPatchType, `[{"op":"test","path":"/data/j","value":"other"}]`)
	wantStatus(t, err, 422, metav1.StatusReasonInvalid, "")
	_, err = patch(types.JSONPatchType, `{"not":"a list"}`)
	wantStatus(t, err, 400, metav1.StatusReasonBadRequest, "")
	_, err = patch(types.MergePatchType, `{"metadata":{"resourceVersion":"1"}}`)
	wantStatus(t, err, 409, metav1.StatusReasonConflict, fmt.Sprintf(conflictMessage, "p"))
	_, err = cms.Patch(ctx(t), "nope", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{})
	wantStatus(t, err, 404, metav1.StatusReasonNotFound, `configmaps "nope" not found`)
	_, err = patch(types.MergePatchType, `{"metadata":{"name":"other"}}`)
	wantStatus(t, err, 400, metav1.StatusReasonBadRequest, "the name of the object (other) does not match the name on the URL (p)")

	r := e.do(t, http.MethodPatch, cmPath(ns, "p"), []byte(`{}`), "Content-Type", "application/json")
	r.wantStatus(t, 415, metav1.StatusReasonUnsupportedMediaType, "")
	after, err := cms.Get(ctx(t), "p", metav1.GetOptions{})
	if err != nil || after.Data["j"] != "json" || after.Data["m"] != "merge" {
		t.Fatalf("after failed patches = %v, %v", after.Data, err)
	}
}

func TestDelete(t *testing.T) {
	e := start(t)
	ns := e.namespace(t)
	cms := e.c.CoreV1().ConfigMaps(ns)
	cm := e.configMap(t, ns, "d", nil)

	wrongUID := types.UID("00000000-0000-0000-0000-000000000000")
	err := cms.Delete(ctx(t), "d", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wrongUID}})
	wantStatus(t, err, 409, metav1.StatusReasonConflict, fmt.Sprintf(
		`Operation cannot be fulfilled on configmaps "d": Precondition failed: UID in precondition: %s, UID in object meta: %s`, wrongUID, cm.UID))
	err = cms.Delete(ctx(t), "d", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: ptr.To("1")}})
	wantStatus(t, err, 409, metav1.StatusReasonConflict, fmt.Sprintf(
		`Operation cannot be fulfilled on configmaps "d": Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: %s`, cm.ResourceVersion))
	err = cms.Delete(ctx(t), "d", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletionPropagation("Sideways"))})
	s := wantStatus(t, err, 422, metav1.StatusReasonInvalid, "")
	wantCause(t, s, metav1.CauseTypeFieldValueNotSupported, "propagationPolicy")
	if _, err := cms.Get(ctx(t), "d", metav1.GetOptions{}); err != nil {
		t.Fatalf("refused deletes removed the object: %v", err)
	}

	// A raw delete answers with a Status naming what went.
	r := e.do(t, http.MethodDelete, cmPath(ns, "d"), []byte(fmt.Sprintf(
		`{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":30,"propagationPolicy":"Background","preconditions":{"uid":%q,"resourceVersion":%q}}`,
		cm.UID, cm.ResourceVersion)))
	var st metav1.Status
	if err := json.Unmarshal(r.body, &st); r.code != 200 || err != nil || st.Status != metav1.StatusSuccess ||
		st.Details == nil || st.Details.Name != "d" || st.Details.Kind != "configmaps" || st.Details.UID != cm.UID {
		t.Fatalf("delete = %d %s", r.code, r.body)
	}
	_, err = cms.Get(ctx(t), "d", metav1.GetOptions{})
	wantStatus(t, err, 404, metav1.StatusReasonNotFound, `configmaps "d" not found`)
	err = cms.Delete(ctx(t), "d", metav1.DeleteOptions{})
	wantStatus(t, err, 404, metav1.StatusReasonNotFound, `configmaps "d" not found`)

	// Foreground and orphan deletion of an object without dependents.
	for _, p := range []metav1.DeletionPropagation{metav1.DeletePropagationForeground, metav1.DeletePropagationOrphan} {
		e.configMap(t, ns, "p", nil)
		if err := cms.Delete(ctx(t), "p", metav1.DeleteOptions{PropagationPolicy: &p}); err != nil {
			t.Fatalf("delete with %s: %v", p, err)
		}
		eventually(t, 10*time.Second, "deleted with "+string(p), func(c context.Context) (bool, error) {
			_, err := cms.Get(c, "p", metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
	}
}

func TestDeleteCollection(t *testing.T) {
	e := start(t)
	ns, other := e.namespace(t), e.namespace(t)
	for i, name := range []string{"a", "b", "c", "d"} {
		tier := []string{"web", "db"}[i%2]
		e.configMap(t, ns, name, map[string]string{"tier": tier})
		e.configMap(t, other, name, map[string]string{"tier": tier})
	}
	cms := e.c.CoreV1().ConfigMaps(ns)
	err := cms.DeleteCollection(ctx(t), metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "tier=web"})
	if err != nil {
		t.Fatal(err)
	}
	left, err := cms.List(ctx(t), metav1.ListOptions{})
	if err != nil || names(left.Items) != "b,d" {
		t.Fatalf("left after deletecollection = %s, %v", names(left.Items), err)
	}
	untouched, err := e.c.CoreV1().ConfigMaps(other).List(ctx(t), metav1.ListOptions{})
	if err != nil || len(untouched.Items) != 4 {
		t.Fatalf("other namespace = %s, %v", names(untouched.Items), err)
	}
	r := e.do(t, http.MethodDelete, cmPath(ns, "")+"?labelSelector=tier%3Ddb&dryRun=All", nil)
	var list corev1.ConfigMapList
	if err := json.Unmarshal(r.body, &list); r.code != 200 || err != nil || names(list.Items) != "b,d" {
		t.Fatalf("dry-run deletecollection = %d %s", r.code, r.body)
	}
	if left, _ := cms.List(ctx(t), metav1.ListOptions{}); len(left.Items) != 2 {
		t.Fatalf("dry-run deletecollection deleted: %s", names(left.Items))
	}
	// A delete that fails ends the deletion, and its error is the answer,
	// as in kube: here a UID precondition that every object but one fails
	// is a 409, not an aggregate of conflicts.
	b, err := cms.Get(ctx(t), "b", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		e.configMap(t, ns, fmt.Sprintf("x%02d", i), map[string]string{"tier": "db"})
	}
	err = cms.DeleteCollection(ctx(t), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &b.UID}}, metav1.ListOptions{})
	if st, ok := err.(apierrors.APIStatus); !ok || st.Status().Code != http.StatusConflict ||
		!strings.Contains(st.Status().Message, ": Precondition failed: UID in precondition: "+string(b.UID)+", UID in object meta: ") {
		t.Fatalf("deletecollection with a failing precondition: %v", err)
	}
}
