package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestLeases: leader election PUTs a lease whether or not it exists, and
// must say which version it updates.
func TestLeases(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	leases := e.Clientset.CoordinationV1().Leases(ns)
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "leader"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("a"), LeaseDurationSeconds: ptr.To[int32](15)},
	}
	body := []byte(`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"leader"},"spec":{"holderIdentity":"a"}}`)
	r := e.Do(t, "PUT", "/apis/coordination.k8s.io/v1/namespaces/"+ns+"/leases/leader", body)
	if r.Code != 201 {
		t.Fatalf("PUT of a missing lease = %d %s, want 201", r.Code, r.Body)
	}
	got, err := leases.Get(e2eutil.Ctx(t), "leader", metav1.GetOptions{})
	if err != nil || *got.Spec.HolderIdentity != "a" || got.UID == "" {
		t.Fatalf("created lease = %+v, %v", got, err)
	}
	lease.Spec.HolderIdentity = ptr.To("b")
	_, err = leases.Update(e2eutil.Ctx(t), lease, metav1.UpdateOptions{})
	s := e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid,
		`leases.coordination.k8s.io "leader" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`)
	e2eutil.WantCause(t, s, metav1.CauseTypeFieldValueInvalid, "metadata.resourceVersion")
	lease.ResourceVersion = got.ResourceVersion
	taken, err := leases.Update(e2eutil.Ctx(t), lease, metav1.UpdateOptions{})
	if err != nil || *taken.Spec.HolderIdentity != "b" {
		t.Fatalf("update with resourceVersion = %+v, %v", taken, err)
	}
	_, err = leases.Update(e2eutil.Ctx(t), lease, metav1.UpdateOptions{})
	e2eutil.WantStatus(t, err, 409, metav1.StatusReasonConflict, "")
	lease.Spec.LeaseDurationSeconds = ptr.To[int32](-1)
	lease.ResourceVersion = taken.ResourceVersion
	_, err = leases.Update(e2eutil.Ctx(t), lease, metav1.UpdateOptions{})
	s = e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, "")
	e2eutil.WantCause(t, s, metav1.CauseTypeFieldValueInvalid, "spec.leaseDurationSeconds")
}

// TestEventsAreOneResource: events.k8s.io/v1 and core/v1 serve the same
// stored events.
func TestEventsAreOneResource(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	now := metav1.NewMicroTime(time.Now())
	ev := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "from-events"}, EventTime: now,
		Regarding: corev1.ObjectReference{Kind: "ConfigMap", Namespace: ns, Name: "a"},
		Reason:    "Tested", Note: "through events.k8s.io", Type: corev1.EventTypeNormal,
		Action: "Test", ReportingController: "example.com/e2e", ReportingInstance: "e2e-1",
	}
	if _, err := e.Clientset.EventsV1().Events(ns).Create(e2eutil.Ctx(t), ev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	core, err := e.Clientset.CoreV1().Events(ns).Get(e2eutil.Ctx(t), "from-events", metav1.GetOptions{})
	if err != nil || core.InvolvedObject.Name != "a" || core.Message != "through events.k8s.io" || core.Reason != "Tested" ||
		core.ReportingController != "example.com/e2e" {
		t.Fatalf("core/v1 view of an events.k8s.io event = %+v, %v", core, err)
	}

	coreEv := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "from-core"},
		InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: ns, Name: "b"},
		Reason:         "Seen", Message: "through core/v1", Type: corev1.EventTypeWarning,
		Source: corev1.EventSource{Component: "e2e"}, Count: 3,
	}
	if _, err := e.Clientset.CoreV1().Events(ns).Create(e2eutil.Ctx(t), coreEv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	viewed, err := e.Clientset.EventsV1().Events(ns).Get(e2eutil.Ctx(t), "from-core", metav1.GetOptions{})
	if err != nil || viewed.Regarding.Name != "b" || viewed.Note != "through core/v1" || viewed.Type != corev1.EventTypeWarning ||
		viewed.DeprecatedCount != 3 || viewed.DeprecatedSource.Component != "e2e" {
		t.Fatalf("events.k8s.io view of a core/v1 event = %+v, %v", viewed, err)
	}
	list, err := e.Clientset.EventsV1().Events(ns).List(e2eutil.Ctx(t), metav1.ListOptions{FieldSelector: "regarding.name=b"})
	if err != nil || names(list.Items) != "from-core" {
		t.Fatalf("events.k8s.io list regarding b = %s, %v", names(list.Items), err)
	}
	all, err := e.Clientset.CoreV1().Events(ns).List(e2eutil.Ctx(t), metav1.ListOptions{})
	if err != nil || names(all.Items) != "from-core,from-events" {
		t.Fatalf("core/v1 list = %s, %v", names(all.Items), err)
	}
	if err := e.Clientset.EventsV1().Events(ns).Delete(e2eutil.Ctx(t), "from-core", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = e.Clientset.CoreV1().Events(ns).Get(e2eutil.Ctx(t), "from-core", metav1.GetOptions{})
	e2eutil.WantStatus(t, err, 404, metav1.StatusReasonNotFound, `events "from-core" not found`)
}
