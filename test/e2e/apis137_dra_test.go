package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/internal/testkit"
)

func exactRequest(name, class string) resourcev1.DeviceRequest {
	return resourcev1.DeviceRequest{Name: name, Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class,
		AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1}}
}

func draClaim(name string, requests ...resourcev1.DeviceRequest) *resourcev1.ResourceClaim {
	return &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: requests}}}
}

// TestDeviceClassesAndClaims: generations, selectors, the request limit,
// an immutable claim spec, admin access only in labelled namespaces, and a
// status that allocates and reserves.
func TestDeviceClassesAndClaims(t *testing.T) {
	e := e2eutil.Start(t)
	classes := e.Clientset.ResourceV1().DeviceClasses()
	class := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Spec: resourcev1.DeviceClassSpec{
		Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "gpu.example.com"`}}}}}
	got, err := classes.Create(e2eutil.Ctx(t), class, metav1.CreateOptions{})
	if err != nil || got.Generation != 1 {
		t.Fatalf("create class: generation %d, %v", got.Generation, err)
	}
	got.Spec.Config = []resourcev1.DeviceClassConfiguration{{DeviceConfiguration: resourcev1.DeviceConfiguration{
		Opaque: &resourcev1.OpaqueDeviceConfiguration{Driver: "gpu.example.com", Parameters: runtime.RawExtension{Raw: []byte(`{"a":1}`)}}}}}
	if got, err = classes.Update(e2eutil.Ctx(t), got, metav1.UpdateOptions{}); err != nil || got.Generation != 2 {
		t.Fatalf("update class: generation %d, %v", got.Generation, err)
	}
	bad := class.DeepCopy()
	bad.Name = "bad"
	bad.Spec.Selectors[0].CEL.Expression = "device.driver =="
	bad.Spec.Config = []resourcev1.DeviceClassConfiguration{{DeviceConfiguration: resourcev1.DeviceConfiguration{
		Opaque: &resourcev1.OpaqueDeviceConfiguration{Driver: "gpu.example.com", Parameters: runtime.RawExtension{Raw: []byte(`[1]`)}}}}}
	_, err = classes.Create(e2eutil.Ctx(t), bad, metav1.CreateOptions{})
	s := e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, "")
	e2eutil.WantCause(t, s, metav1.CauseTypeFieldValueInvalid, "spec.selectors[0].cel.expression")
	e2eutil.WantCause(t, s, metav1.CauseTypeFieldValueInvalid, "spec.config[0].opaque.parameters")
	// Selectors are type-checked in DRA's environment, within its cost
	// limit: kube-apiserver v1.37.2's messages.
	for expr, message := range map[string]string{
		`device.nosuch == 1`: "spec.selectors[0].cel.expression: Invalid value: \"device.nosuch == 1\": compilation failed: ERROR: <input>:1:7: undefined field 'nosuch'\n | device.nosuch == 1\n | ......^",
		`device.driver == 1`: "spec.selectors[0].cel.expression: Invalid value: \"device.driver == 1\": compilation failed: ERROR: <input>:1:15: found no matching overload for '_==_' applied to '(string, int)'\n | device.driver == 1\n | ..............^",
		`device.driver`:      "spec.selectors[0].cel.expression: Invalid value: \"device.driver\": must evaluate to bool or the unknown type, not string",
		`device.attributes["dra.example.com"].all(a, device.attributes["dra.example.com"].all(b, device.attributes["dra.example.com"].all(c, device.attributes["dra.example.com"].all(d, true))))`: "spec.selectors[0].cel.expression: Forbidden: too complex, exceeds cost limit",
	} {
		typed := class.DeepCopy()
		typed.Name = "typed"
		typed.Spec.Selectors[0].CEL.Expression = expr
		_, err = classes.Create(e2eutil.Ctx(t), typed, metav1.CreateOptions{})
		e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, `DeviceClass.resource.k8s.io "typed" is invalid: `+message)
	}
	typed := class.DeepCopy()
	typed.Name = "typed"
	typed.Spec.Selectors[0].CEL.Expression = `device.attributes["dra.example.com"].model == "a" && device.capacity["dra.example.com"].memory.compareTo(quantity("1Gi")) >= 0`
	if _, err = classes.Create(e2eutil.Ctx(t), typed, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a typed selector: %v", err)
	}

	ns := e.Namespace(t)
	claims := e.Clientset.ResourceV1().ResourceClaims(ns)
	var many []resourcev1.DeviceRequest
	for i := range resourcev1.DeviceRequestsMaxSize + 1 {
		many = append(many, exactRequest(fmt.Sprintf("r%d", i), "gpu"))
	}
	_, err = claims.Create(e2eutil.Ctx(t), draClaim("many", many...), metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid,
		`ResourceClaim.resource.k8s.io "many" is invalid: spec.devices.requests: Too many: 33: must have at most 32 items`)

	admin := draClaim("admin", exactRequest("r", "gpu"))
	admin.Spec.Devices.Requests[0].Exactly.AdminAccess = ptr.To(true)
	_, err = claims.Create(e2eutil.Ctx(t), admin, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, `ResourceClaim.resource.k8s.io "admin" is invalid: spec.devices.requests[0].adminAccess: `+
		"Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace")

	c, err := claims.Create(e2eutil.Ctx(t), draClaim("one", exactRequest("r", "gpu")), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.Spec.Devices.Requests[0].Exactly.Count = 2
	_, err = claims.Update(e2eutil.Ctx(t), c, metav1.UpdateOptions{})
	e2eutil.WantCause(t, e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, ""), metav1.CauseTypeFieldValueInvalid, "spec")

	c, _ = claims.Get(e2eutil.Ctx(t), "one", metav1.GetOptions{})
	c.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "p", UID: "uid-1"}}
	_, err = claims.UpdateStatus(e2eutil.Ctx(t), c, metav1.UpdateOptions{})
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid,
		`ResourceClaim.resource.k8s.io "one" is invalid: status.reservedFor: Forbidden: may not be specified when `+"`allocated` is not set")
	c.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
		{Request: "r", Driver: "gpu.example.com", Pool: "node-1", Device: "gpu-0"}}}}
	if c, err = claims.UpdateStatus(e2eutil.Ctx(t), c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := testkit.RunKubectl(t, e.Kubeconfig, nil, "get", "resourceclaims", "-n", ns)
	if err != nil || !strings.Contains(out, "allocated,reserved") {
		t.Errorf("kubectl get resourceclaims = %v\n%s%s", err, out, stderr)
	}
	c.Status.Allocation.Devices.Results[0].Device = "gpu-1"
	_, err = claims.UpdateStatus(e2eutil.Ctx(t), c, metav1.UpdateOptions{})
	e2eutil.WantCause(t, e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, ""), metav1.CauseTypeFieldValueInvalid, "status.allocation")
}

func slice(name, node string, devices int) *resourcev1.ResourceSlice {
	s := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: resourcev1.ResourceSliceSpec{
		Driver: "gpu.example.com", Pool: resourcev1.ResourcePool{Name: node, ResourceSliceCount: 1}, NodeName: ptr.To(node)}}
	for i := range devices {
		s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{Name: fmt.Sprintf("gpu-%d", i),
			Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"model": {StringValue: ptr.To("x")}}})
	}
	return s
}

// TestResourceSlicesAndTaintRules: the device limit, node choice, field
// selectors, fields of features v1.37 has off dropped, and taint rules
// with their status.
func TestResourceSlicesAndTaintRules(t *testing.T) {
	e := e2eutil.Start(t)
	slices := e.Clientset.ResourceV1().ResourceSlices()
	if _, err := slices.Create(e2eutil.Ctx(t), slice("node-1-gpu", "node-1", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	withList := slice("node-2-gpu", "node-2", 1)
	withList.Spec.Devices[0].Attributes["sizes"] = resourcev1.DeviceAttribute{IntValue: ptr.To[int64](1), IntValues: []int64{1, 2}}
	got, err := slices.Create(e2eutil.Ctx(t), withList, metav1.CreateOptions{})
	if err != nil || got.Spec.Devices[0].Attributes["sizes"].IntValues != nil {
		t.Fatalf("list attribute (alpha, off) kept: %+v %v", got.Spec.Devices[0].Attributes, err)
	}
	_, err = slices.Create(e2eutil.Ctx(t), slice("big", "node-3", resourcev1.ResourceSliceMaxDevices+1), metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid,
		`ResourceSlice.resource.k8s.io "big" is invalid: spec.devices: Too many: 129: must have at most 128 items`)
	nowhere := slice("nowhere", "node-4", 1)
	nowhere.Spec.NodeName = nil
	_, err = slices.Create(e2eutil.Ctx(t), nowhere, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, `ResourceSlice.resource.k8s.io "nowhere" is invalid: spec: Required value: `+
		"exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required")
	list, err := slices.List(e2eutil.Ctx(t), metav1.ListOptions{FieldSelector: "spec.nodeName=node-1,spec.driver=gpu.example.com"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "node-1-gpu" {
		t.Fatalf("field selector: %v %v", names(list.Items), err)
	}
	out, stderr, err := testkit.RunKubectl(t, e.Kubeconfig, nil, "get", "resourceslices")
	if err != nil || !strings.Contains(out, "node-1") || !strings.Contains(out, "gpu.example.com") {
		t.Errorf("kubectl get resourceslices = %v\n%s%s", err, out, stderr)
	}

	rules := e.Clientset.ResourceV1().DeviceTaintRules()
	rule := &resourcev1.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: "drain"}, Spec: resourcev1.DeviceTaintRuleSpec{
		DeviceSelector: &resourcev1.DeviceTaintSelector{Driver: ptr.To("gpu.example.com")},
		Taint:          resourcev1.DeviceTaint{Key: "example.com/broken", Effect: "Evict"}}}
	_, err = rules.Create(e2eutil.Ctx(t), rule, metav1.CreateOptions{})
	e2eutil.WantCause(t, e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, ""), metav1.CauseTypeFieldValueNotSupported, "spec.taint.effect")
	rule.Spec.Taint.Effect = resourcev1.DeviceTaintEffectNoSchedule
	r, err := rules.Create(e2eutil.Ctx(t), rule, metav1.CreateOptions{})
	if err != nil || r.Generation != 1 {
		t.Fatalf("create rule: %v", err)
	}
	r.Status.Conditions = []metav1.Condition{{Type: resourcev1.DeviceTaintConditionEvictionInProgress, Status: metav1.ConditionFalse,
		Reason: "Done", LastTransitionTime: metav1.Now()}}
	if r, err = rules.UpdateStatus(e2eutil.Ctx(t), r, metav1.UpdateOptions{}); err != nil || len(r.Status.Conditions) != 1 {
		t.Fatalf("rule status: %v", err)
	}
	r.Spec.Taint.Effect = resourcev1.DeviceTaintEffectNoExecute
	if r, err = rules.Update(e2eutil.Ctx(t), r, metav1.UpdateOptions{}); err != nil || r.Generation != 2 || r.Spec.Taint.TimeAdded == nil ||
		len(r.Status.Conditions) != 1 {
		t.Fatalf("rule update: %+v %v", r, err)
	}
}

// TestResourceClaimTemplates: a template's spec is validated as a claim's,
// under spec.spec, and never changes.
func TestResourceClaimTemplates(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	labelled := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("admin"),
		Labels: map[string]string{resourcev1.DRAAdminNamespaceLabelKey: "true"}}}
	if _, err := e.Clientset.CoreV1().Namespaces().Create(e2eutil.Ctx(t), labelled, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tmpl := &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: "t"}, Spec: resourcev1.ResourceClaimTemplateSpec{
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{exactRequest("r", "gpu")}}}}}
	tmpl.Spec.Spec.Devices.Requests[0].Exactly.AdminAccess = ptr.To(true)
	templates := e.Clientset.ResourceV1().ResourceClaimTemplates(labelled.Name)
	got, err := templates.Create(e2eutil.Ctx(t), tmpl, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Spec.Spec.Devices.Requests[0].Name = "s"
	_, err = templates.Update(e2eutil.Ctx(t), got, metav1.UpdateOptions{})
	e2eutil.WantCause(t, e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, ""), metav1.CauseTypeFieldValueInvalid, "spec")
	bad := tmpl.DeepCopy()
	bad.Spec.Spec.Devices.Requests[0].Exactly.AdminAccess = nil
	bad.Spec.Spec.Devices.Requests[0].Exactly.AllocationMode = "Some"
	_, err = e.Clientset.ResourceV1().ResourceClaimTemplates(ns).Create(e2eutil.Ctx(t), bad, metav1.CreateOptions{})
	e2eutil.WantCause(t, e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, ""), metav1.CauseTypeFieldValueNotSupported,
		"spec.spec.devices.requests[0].exactly.allocationMode")
}
