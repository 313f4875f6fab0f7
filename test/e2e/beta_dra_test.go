package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"net/http"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// TestBetaResourceV1beta1: resource.k8s.io/v1beta1 behind
// --runtime-config is the GA resources at another shape: a request's
// fields sit in the request (v1 nests them under exactly) and a device's
// under basic. Objects written through one version read back through the
// other, defaulted and validated as GA objects (with GA field paths, as
// kube's), watched, listed and printed through v1beta1.
func TestBetaResourceV1beta1(t *testing.T) {
	e := e2eutil.Start(t, "--runtime-config=resource.k8s.io/v1beta1=true")
	ns := e.Namespace(t)
	beta, ga := e.Clientset.ResourceV1beta1(), e.Clientset.ResourceV1()

	w, err := beta.ResourceClaims(ns).Watch(e2eutil.Ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	claim := &resourcev1beta1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: resourcev1beta1.ResourceClaimSpec{
		Devices: resourcev1beta1.DeviceClaim{Requests: []resourcev1beta1.DeviceRequest{{Name: "r", DeviceClassName: "gpu"}}}}}
	created, err := beta.ResourceClaims(ns).Create(e2eutil.Ctx(t), claim, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := created.Spec.Devices.Requests[0]; r.AllocationMode != resourcev1beta1.DeviceAllocationModeExactCount || r.Count != 1 {
		t.Errorf("v1beta1 request not defaulted: %+v", r)
	}
	ev := e2eutil.NextEvent(t, w)
	if got, ok := ev.Object.(*resourcev1beta1.ResourceClaim); !ok || ev.Type != watch.Added || got.Spec.Devices.Requests[0].DeviceClassName != "gpu" {
		t.Errorf("watch event %s %#v", ev.Type, ev.Object)
	}
	read, err := ga.ResourceClaims(ns).Get(e2eutil.Ctx(t), "c", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if x := read.Spec.Devices.Requests[0].Exactly; x == nil || x.DeviceClassName != "gpu" || x.Count != 1 || read.ResourceVersion != created.ResourceVersion {
		t.Fatalf("read through v1: %+v", read.Spec.Devices.Requests[0])
	}

	// Validation is GA's: its paths name v1's fields.
	bad := claim.DeepCopy()
	bad.Name = "bad"
	bad.Spec.Devices.Requests[0].Count = 2
	bad.Spec.Devices.Requests[0].AllocationMode = resourcev1beta1.DeviceAllocationModeAll
	_, err = beta.ResourceClaims(ns).Create(e2eutil.Ctx(t), bad, metav1.CreateOptions{})
	e2eutil.WantCause(t, e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, ""),
		metav1.CauseTypeFieldValueInvalid, "spec.devices.requests[0].exactly.count")

	// Status through v1beta1, read through v1.
	created.Status.Allocation = &resourcev1beta1.AllocationResult{Devices: resourcev1beta1.DeviceAllocationResult{
		Results: []resourcev1beta1.DeviceRequestAllocationResult{{Request: "r", Driver: "gpu.example.com", Pool: "node-1", Device: "gpu-0"}}}}
	created.Spec.Devices.Requests[0].Name = "ignored"
	status, err := beta.ResourceClaims(ns).UpdateStatus(e2eutil.Ctx(t), created, metav1.UpdateOptions{})
	if err != nil || status.Spec.Devices.Requests[0].Name != "r" {
		t.Fatalf("status update: %v", err)
	}
	read, err = ga.ResourceClaims(ns).Get(e2eutil.Ctx(t), "c", metav1.GetOptions{})
	if err != nil || read.Status.Allocation == nil || read.Status.Allocation.Devices.Results[0].Device != "gpu-0" {
		t.Fatalf("status read through v1: %+v %v", read.Status, err)
	}
	if ev := e2eutil.NextEvent(t, w); ev.Type != watch.Modified {
		t.Errorf("watch event %s, want MODIFIED", ev.Type)
	}

	// A slice written through v1 has its device's fields under basic
	// at v1beta1, and the other way round.
	s := slice("node-1-gpu", "node-1", 1)
	if _, err := ga.ResourceSlices().Create(e2eutil.Ctx(t), s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bs, err := beta.ResourceSlices().Get(e2eutil.Ctx(t), s.Name, metav1.GetOptions{})
	if err != nil || bs.Spec.NodeName != "node-1" || bs.Spec.Devices[0].Basic == nil || *bs.Spec.Devices[0].Basic.Attributes["model"].StringValue != "x" {
		t.Fatalf("slice read through v1beta1: %+v %v", bs.Spec, err)
	}
	bs.Spec.Devices[0].Basic.Attributes["model"] = resourcev1beta1.DeviceAttribute{StringValue: ptr.To("y")}
	if _, err := beta.ResourceSlices().Update(e2eutil.Ctx(t), bs, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	gs, err := ga.ResourceSlices().Get(e2eutil.Ctx(t), s.Name, metav1.GetOptions{})
	if err != nil || *gs.Spec.Devices[0].Attributes["model"].StringValue != "y" || gs.Generation != 2 {
		t.Fatalf("slice read through v1: %+v %v", gs, err)
	}
	list, err := beta.ResourceSlices().List(e2eutil.Ctx(t), metav1.ListOptions{FieldSelector: "spec.nodeName=node-1"})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("field selector through v1beta1: %v", err)
	}

	// Tables are GA's.
	r := e.Do(t, http.MethodGet, "/apis/resource.k8s.io/v1beta1/namespaces/"+ns+"/resourceclaims", nil, "Accept", e2eutil.TableAccept)
	if r.Code != http.StatusOK || !strings.Contains(string(r.Body), `"allocated"`) {
		t.Errorf("table: %d %s", r.Code, r.Body)
	}
}

// TestBetaResourceV1beta2: resource.k8s.io/v1beta2 has v1's shape; its
// taint rules (and status) share v1's objects.
func TestBetaResourceV1beta2(t *testing.T) {
	e := e2eutil.Start(t, "--runtime-config=resource.k8s.io/v1beta2=true")
	ns := e.Namespace(t)
	beta, ga := e.Clientset.ResourceV1beta2(), e.Clientset.ResourceV1()
	class := &resourcev1beta2.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}}
	if _, err := beta.DeviceClasses().Create(e2eutil.Ctx(t), class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ga.DeviceClasses().Get(e2eutil.Ctx(t), "gpu", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	tmpl := &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: "t"}, Spec: resourcev1.ResourceClaimTemplateSpec{
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{exactRequest("r", "gpu")}}}}}
	if _, err := ga.ResourceClaimTemplates(ns).Create(e2eutil.Ctx(t), tmpl, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bt, err := beta.ResourceClaimTemplates(ns).Get(e2eutil.Ctx(t), "t", metav1.GetOptions{})
	if err != nil || bt.Spec.Spec.Devices.Requests[0].Exactly.DeviceClassName != "gpu" {
		t.Fatalf("template through v1beta2: %+v %v", bt, err)
	}

	w, err := beta.DeviceTaintRules().Watch(e2eutil.Ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	rule := &resourcev1beta2.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: "drain"}, Spec: resourcev1beta2.DeviceTaintRuleSpec{
		DeviceSelector: &resourcev1beta2.DeviceTaintSelector{Driver: ptr.To("gpu.example.com")},
		Taint:          resourcev1beta2.DeviceTaint{Key: "example.com/broken", Effect: resourcev1beta2.DeviceTaintEffectNoSchedule}}}
	r, err := beta.DeviceTaintRules().Create(e2eutil.Ctx(t), rule, metav1.CreateOptions{})
	if err != nil || r.Generation != 1 {
		t.Fatalf("create rule: %v", err)
	}
	if ev := e2eutil.NextEvent(t, w); ev.Type != watch.Added {
		t.Errorf("watch event %s", ev.Type)
	}
	r.Status.Conditions = []metav1.Condition{{Type: resourcev1beta2.DeviceTaintConditionEvictionInProgress, Status: metav1.ConditionFalse,
		Reason: "Done", LastTransitionTime: metav1.Now()}}
	if r, err = beta.DeviceTaintRules().UpdateStatus(e2eutil.Ctx(t), r, metav1.UpdateOptions{}); err != nil || len(r.Status.Conditions) != 1 {
		t.Fatalf("rule status: %v", err)
	}
	g, err := ga.DeviceTaintRules().Get(e2eutil.Ctx(t), "drain", metav1.GetOptions{})
	if err != nil || len(g.Status.Conditions) != 1 || g.ResourceVersion != r.ResourceVersion {
		t.Fatalf("rule through v1: %+v %v", g, err)
	}
	g.Spec.Taint.Effect = resourcev1.DeviceTaintEffectNoExecute
	if _, err := ga.DeviceTaintRules().Update(e2eutil.Ctx(t), g, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if ev := e2eutil.NextEvent(t, w); ev.Type != watch.Modified {
		t.Errorf("watch event %s", ev.Type)
	}
	if ev := e2eutil.NextEvent(t, w); ev.Type != watch.Modified || ev.Object.(*resourcev1beta2.DeviceTaintRule).Spec.Taint.Effect != resourcev1beta2.DeviceTaintEffectNoExecute {
		t.Errorf("watch event %s %+v", ev.Type, ev.Object)
	}
	rule.Name, rule.Spec.Taint.Effect = "bad", "Evict"
	_, err = beta.DeviceTaintRules().Create(e2eutil.Ctx(t), rule, metav1.CreateOptions{})
	e2eutil.WantCause(t, e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, ""), metav1.CauseTypeFieldValueNotSupported, "spec.taint.effect")
}
