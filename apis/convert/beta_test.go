package convert_test

import (
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/apis/scheme"
)

// TestBetaConversions: each pair converts both ways as kube converts it,
// and back again to what it was.
func TestBetaConversions(t *testing.T) {
	model := map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"model": {StringValue: ptr.To("x")}}
	for _, tc := range []struct {
		name     string
		beta, ga runtime.Object
	}{{
		name: "v1beta1 request fields sit under exactly in v1",
		beta: &resourcev1beta1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", ResourceVersion: "7"},
			Spec: resourcev1beta1.ResourceClaimSpec{Devices: resourcev1beta1.DeviceClaim{Requests: []resourcev1beta1.DeviceRequest{
				{Name: "a", DeviceClassName: "gpu", AllocationMode: resourcev1beta1.DeviceAllocationModeExactCount, Count: 2,
					Tolerations: []resourcev1beta1.DeviceToleration{{Key: "k", Operator: "Exists"}}},
				{Name: "b", FirstAvailable: []resourcev1beta1.DeviceSubRequest{{Name: "s", DeviceClassName: "gpu", Count: 1}}}}}}},
		ga: &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", ResourceVersion: "7"},
			Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{
				{Name: "a", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu", AllocationMode: resourcev1.DeviceAllocationModeExactCount,
					Count: 2, Tolerations: []resourcev1.DeviceToleration{{Key: "k", Operator: "Exists"}}}},
				{Name: "b", FirstAvailable: []resourcev1.DeviceSubRequest{{Name: "s", DeviceClassName: "gpu", Count: 1}}}}}}},
	}, {
		name: "v1beta1 device fields sit under basic, always there",
		beta: &resourcev1beta1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: resourcev1beta1.ResourceSliceSpec{
			Driver: "d", NodeName: "n", Devices: []resourcev1beta1.Device{
				{Name: "gpu-0", Basic: &resourcev1beta1.BasicDevice{Attributes: map[resourcev1beta1.QualifiedName]resourcev1beta1.DeviceAttribute{
					"model": {StringValue: ptr.To("x")}}}},
				{Name: "gpu-1", Basic: &resourcev1beta1.BasicDevice{}}}}},
		ga: &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: resourcev1.ResourceSliceSpec{
			Driver: "d", NodeName: ptr.To("n"), Devices: []resourcev1.Device{{Name: "gpu-0", Attributes: model}, {Name: "gpu-1"}}}},
	}, {
		name: "v1beta2 is v1 under other types",
		beta: &resourcev1beta2.DeviceTaintRuleList{ListMeta: metav1.ListMeta{ResourceVersion: "9"}, Items: []resourcev1beta2.DeviceTaintRule{{
			ObjectMeta: metav1.ObjectMeta{Name: "r"}, Spec: resourcev1beta2.DeviceTaintRuleSpec{Taint: resourcev1beta2.DeviceTaint{Key: "k", Effect: "NoSchedule"}}}}},
		ga: &resourcev1.DeviceTaintRuleList{ListMeta: metav1.ListMeta{ResourceVersion: "9"}, Items: []resourcev1.DeviceTaintRule{{
			ObjectMeta: metav1.ObjectMeta{Name: "r"}, Spec: resourcev1.DeviceTaintRuleSpec{Taint: resourcev1.DeviceTaint{Key: "k", Effect: "NoSchedule"}}}}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			convertsTo(t, tc.beta, tc.ga)
			convertsTo(t, tc.ga, tc.beta)
		})
	}
}

func convertsTo(t *testing.T, in, want runtime.Object) {
	t.Helper()
	out := want.DeepCopyObject()
	in = in.DeepCopyObject()
	if err := scheme.Scheme.Convert(in, out, nil); err != nil {
		t.Fatal(err)
	}
	if !apiequality.Semantic.DeepEqual(out, want) {
		t.Errorf("%T to %T:\n%s", in, out, diff.Diff(want, out))
	}
}
