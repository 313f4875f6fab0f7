package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"encoding/json"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestDryRun: dryRun=All answers every write as it would be done, and
// stores nothing: no change, no new resourceVersion, no watch event.
func TestDryRun(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	cms := e.Clientset.CoreV1().ConfigMaps(ns)
	existing := e.ConfigMap(t, ns, "a", nil)
	w, err := cms.Watch(e2eutil.Ctx(t), metav1.ListOptions{ResourceVersion: existing.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "gen-"}, Data: map[string]string{"x": "y"}}
	created, err := cms.Create(e2eutil.Ctx(t), cm, metav1.CreateOptions{DryRun: e2eutil.DryRun})
	if err != nil || created.UID == "" || created.CreationTimestamp.IsZero() || len(created.Name) != len("gen-")+5 ||
		created.Namespace != ns || created.Data["x"] != "y" {
		t.Fatalf("dry-run create = %+v, %v", created, err)
	}
	_, err = cms.Create(e2eutil.Ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{DryRun: e2eutil.DryRun})
	e2eutil.WantStatus(t, err, 409, metav1.StatusReasonAlreadyExists, `configmaps "a" already exists`)
	_, err = cms.Create(e2eutil.Ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name"}}, metav1.CreateOptions{DryRun: e2eutil.DryRun})
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, "")

	changed := existing.DeepCopy()
	changed.Data["k"] = "dry"
	updated, err := cms.Update(e2eutil.Ctx(t), changed, metav1.UpdateOptions{DryRun: e2eutil.DryRun})
	if err != nil || updated.Data["k"] != "dry" || updated.UID != existing.UID {
		t.Fatalf("dry-run update = %+v, %v", updated, err)
	}
	changed.ResourceVersion = "1"
	_, err = cms.Update(e2eutil.Ctx(t), changed, metav1.UpdateOptions{DryRun: e2eutil.DryRun})
	e2eutil.WantStatus(t, err, 409, metav1.StatusReasonConflict, "")
	patched, err := cms.Patch(e2eutil.Ctx(t), "a", types.MergePatchType, []byte(`{"data":{"p":"dry"}}`), metav1.PatchOptions{DryRun: e2eutil.DryRun})
	if err != nil || patched.Data["p"] != "dry" || patched.Data["k"] != "v" {
		t.Fatalf("dry-run patch = %+v, %v", patched, err)
	}

	r := e.Do(t, http.MethodDelete, e2eutil.CMPath(ns, "a")+"?dryRun=All", nil)
	var st metav1.Status
	if err := json.Unmarshal(r.Body, &st); r.Code != 200 || err != nil || st.Status != metav1.StatusSuccess || st.Details.UID != existing.UID {
		t.Fatalf("dry-run delete = %d %s", r.Code, r.Body)
	}
	e.Do(t, http.MethodDelete, e2eutil.CMPath(ns, "")+"?dryRun=All", nil)
	ns2 := e.Namespace(t)
	if err := e.Clientset.CoreV1().Namespaces().Delete(e2eutil.Ctx(t), ns2, metav1.DeleteOptions{DryRun: e2eutil.DryRun}); err != nil {
		t.Fatal(err)
	}

	after, err := cms.List(e2eutil.Ctx(t), metav1.ListOptions{})
	if err != nil || len(after.Items) != 1 || after.Items[0].ResourceVersion != existing.ResourceVersion || after.Items[0].Data["k"] != "v" {
		t.Fatalf("after dry runs the namespace holds %+v, %v", after.Items, err)
	}
	if got, err := e.Clientset.CoreV1().Namespaces().Get(e2eutil.Ctx(t), ns2, metav1.GetOptions{}); err != nil || got.DeletionTimestamp != nil {
		t.Fatalf("dry-run namespace delete left %+v, %v", got, err)
	}
	select {
	case ev := <-w.ResultChan():
		t.Fatalf("a dry run made a watch event: %s %+v", ev.Type, ev.Object)
	case <-time.After(500 * time.Millisecond):
	}

	r = e.Do(t, http.MethodPost, e2eutil.CMPath(ns, "")+"?dryRun=Some", []byte(`{"metadata":{"name":"x"}}`))
	s := r.WantStatus(t, 422, metav1.StatusReasonInvalid, "")
	if s.Details == nil || s.Details.Kind != "CreateOptions" {
		t.Fatalf("bad dryRun answer = %+v", s)
	}
}
