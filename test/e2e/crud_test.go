package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

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
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	cms := e.Clientset.CoreV1().ConfigMaps(ns)
	created := e.ConfigMap(t, ns, "a", map[string]string{"app": "x"})
	if created.UID == "" || created.ResourceVersion == "" || created.CreationTimestamp.IsZero() || created.Namespace != ns {
		t.Fatalf("created object lacks server fields: %+v", created.ObjectMeta)
	}
	got, err := cms.Get(e2eutil.Ctx(t), "a", metav1.GetOptions{})
	if err != nil || got.ResourceVersion != created.ResourceVersion || got.Data["k"] != "v" {
		t.Fatalf("get = %+v, %v", got, err)
	}
	list, err := cms.List(e2eutil.Ctx(t), metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "a" || list.ResourceVersion == "" {
		t.Fatalf("list = %+v, %v", list, err)
	}

	got.Data["k"] = "w"
	updated, err := cms.Update(e2eutil.Ctx(t), got, metav1.UpdateOptions{})
	if err != nil || updated.Data["k"] != "w" || updated.ResourceVersion == got.ResourceVersion || updated.UID != created.UID {
		t.Fatalf("update = %+v, %v", updated, err)
	}
	// The old resourceVersion is stale now.
	got.Data["k"] = "stale"
	_, err = cms.Update(e2eutil.Ctx(t), got, metav1.UpdateOptions{})
	e2eutil.WantStatus(t, err, 409, metav1.StatusReasonConflict, fmt.Sprintf(conflictMessage, "a"))

	// An update without resourceVersion is unconditional for config maps.
	got.ResourceVersion = ""
	got.Data["k"] = "forced"
	if _, err := cms.Update(e2eutil.Ctx(t), got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("unconditional update: %v", err)
	}
	_, err = cms.Create(e2eutil.Ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 409, metav1.StatusReasonAlreadyExists, `configmaps "a" already exists`)
	_, err = cms.Update(e2eutil.Ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "missing"}}, metav1.UpdateOptions{})
	e2eutil.WantStatus(t, err, 404, metav1.StatusReasonNotFound, `configmaps "missing" not found`)

	gen, err := cms.Create(e2eutil.Ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "gen-"}}, metav1.CreateOptions{})
	if err != nil || len(gen.Name) != len("gen-")+5 {
		t.Fatalf("generateName create = %v, %v", gen.Name, err)
	}
}

func TestPatch(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	cms := e.Clientset.CoreV1().ConfigMaps(ns)
	e.ConfigMap(t, ns, "p", nil)
	patch := func(pt types.PatchType, body string) (*corev1.ConfigMap, error) {
		return cms.Patch(e2eutil.Ctx(t), "p", pt, []byte(body), metav1.PatchOptions{})
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
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, "")
	_, err = patch(types.JSONPatchType, `{"not":"a list"}`)
	e2eutil.WantStatus(t, err, 400, metav1.StatusReasonBadRequest, "")
	_, err = patch(types.MergePatchType, `{"metadata":{"resourceVersion":"1"}}`)
	e2eutil.WantStatus(t, err, 409, metav1.StatusReasonConflict, fmt.Sprintf(conflictMessage, "p"))
	_, err = cms.Patch(e2eutil.Ctx(t), "nope", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{})
	e2eutil.WantStatus(t, err, 404, metav1.StatusReasonNotFound, `configmaps "nope" not found`)
	_, err = patch(types.MergePatchType, `{"metadata":{"name":"other"}}`)
	e2eutil.WantStatus(t, err, 400, metav1.StatusReasonBadRequest, "the name of the object (other) does not match the name on the URL (p)")

	r := e.Do(t, http.MethodPatch, e2eutil.CMPath(ns, "p"), []byte(`{}`), "Content-Type", "application/json")
	r.WantStatus(t, 415, metav1.StatusReasonUnsupportedMediaType, "")
	after, err := cms.Get(e2eutil.Ctx(t), "p", metav1.GetOptions{})
	if err != nil || after.Data["j"] != "json" || after.Data["m"] != "merge" {
		t.Fatalf("after failed patches = %v, %v", after.Data, err)
	}
}

func TestDelete(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	cms := e.Clientset.CoreV1().ConfigMaps(ns)
	cm := e.ConfigMap(t, ns, "d", nil)

	wrongUID := types.UID("00000000-0000-0000-0000-000000000000")
	err := cms.Delete(e2eutil.Ctx(t), "d", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wrongUID}})
	// kube's early check of a delete's preconditions names the kind.
	e2eutil.WantStatus(t, err, 409, metav1.StatusReasonConflict, fmt.Sprintf(
		`Operation cannot be fulfilled on ConfigMap "d": the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated`, wrongUID, cm.UID))
	err = cms.Delete(e2eutil.Ctx(t), "d", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: ptr.To("1")}})
	e2eutil.WantStatus(t, err, 409, metav1.StatusReasonConflict, fmt.Sprintf(
		`Operation cannot be fulfilled on ConfigMap "d": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (%s). The object might have been modified`, cm.ResourceVersion))
	err = cms.Delete(e2eutil.Ctx(t), "d", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletionPropagation("Sideways"))})
	s := e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, "")
	e2eutil.WantCause(t, s, metav1.CauseTypeFieldValueNotSupported, "propagationPolicy")
	if _, err := cms.Get(e2eutil.Ctx(t), "d", metav1.GetOptions{}); err != nil {
		t.Fatalf("refused deletes removed the object: %v", err)
	}

	// A raw delete answers with a Status naming what went.
	r := e.Do(t, http.MethodDelete, e2eutil.CMPath(ns, "d"), []byte(fmt.Sprintf(
		`{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":30,"propagationPolicy":"Background","preconditions":{"uid":%q,"resourceVersion":%q}}`,
		cm.UID, cm.ResourceVersion)))
	var st metav1.Status
	if err := json.Unmarshal(r.Body, &st); r.Code != 200 || err != nil || st.Status != metav1.StatusSuccess ||
		st.Details == nil || st.Details.Name != "d" || st.Details.Kind != "configmaps" || st.Details.UID != cm.UID {
		t.Fatalf("delete = %d %s", r.Code, r.Body)
	}
	_, err = cms.Get(e2eutil.Ctx(t), "d", metav1.GetOptions{})
	e2eutil.WantStatus(t, err, 404, metav1.StatusReasonNotFound, `configmaps "d" not found`)
	err = cms.Delete(e2eutil.Ctx(t), "d", metav1.DeleteOptions{})
	e2eutil.WantStatus(t, err, 404, metav1.StatusReasonNotFound, `configmaps "d" not found`)

	// Foreground and orphan deletion of an object without dependents.
	for _, p := range []metav1.DeletionPropagation{metav1.DeletePropagationForeground, metav1.DeletePropagationOrphan} {
		e.ConfigMap(t, ns, "p", nil)
		if err := cms.Delete(e2eutil.Ctx(t), "p", metav1.DeleteOptions{PropagationPolicy: &p}); err != nil {
			t.Fatalf("delete with %s: %v", p, err)
		}
		e2eutil.Eventually(t, 10*time.Second, "deleted with "+string(p), func(c context.Context) (bool, error) {
			_, err := cms.Get(c, "p", metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
	}
}

func TestDeleteCollection(t *testing.T) {
	e := e2eutil.Start(t)
	ns, other := e.Namespace(t), e.Namespace(t)
	for i, name := range []string{"a", "b", "c", "d"} {
		tier := []string{"web", "db"}[i%2]
		e.ConfigMap(t, ns, name, map[string]string{"tier": tier})
		e.ConfigMap(t, other, name, map[string]string{"tier": tier})
	}
	cms := e.Clientset.CoreV1().ConfigMaps(ns)
	err := cms.DeleteCollection(e2eutil.Ctx(t), metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "tier=web"})
	if err != nil {
		t.Fatal(err)
	}
	left, err := cms.List(e2eutil.Ctx(t), metav1.ListOptions{})
	if err != nil || names(left.Items) != "b,d" {
		t.Fatalf("left after deletecollection = %s, %v", names(left.Items), err)
	}
	untouched, err := e.Clientset.CoreV1().ConfigMaps(other).List(e2eutil.Ctx(t), metav1.ListOptions{})
	if err != nil || len(untouched.Items) != 4 {
		t.Fatalf("other namespace = %s, %v", names(untouched.Items), err)
	}
	r := e.Do(t, http.MethodDelete, e2eutil.CMPath(ns, "")+"?labelSelector=tier%3Ddb&dryRun=All", nil)
	var list corev1.ConfigMapList
	if err := json.Unmarshal(r.Body, &list); r.Code != 200 || err != nil || names(list.Items) != "b,d" {
		t.Fatalf("dry-run deletecollection = %d %s", r.Code, r.Body)
	}
	if left, _ := cms.List(e2eutil.Ctx(t), metav1.ListOptions{}); len(left.Items) != 2 {
		t.Fatalf("dry-run deletecollection deleted: %s", names(left.Items))
	}
	// A delete that fails ends the deletion, and its error is the answer,
	// as in kube: here a UID precondition that every object but one fails
	// is a 409, not an aggregate of conflicts.
	b, err := cms.Get(e2eutil.Ctx(t), "b", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		e.ConfigMap(t, ns, fmt.Sprintf("x%02d", i), map[string]string{"tier": "db"})
	}
	err = cms.DeleteCollection(e2eutil.Ctx(t), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &b.UID}}, metav1.ListOptions{})
	if st, ok := err.(apierrors.APIStatus); !ok || st.Status().Code != http.StatusConflict ||
		!strings.Contains(st.Status().Message, ": the UID in the precondition ("+string(b.UID)+") does not match the UID in record (") {
		t.Fatalf("deletecollection with a failing precondition: %v", err)
	}
}
