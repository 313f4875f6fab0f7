package core

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func notSupportedAt(f string) wantErr { return wantErr{field.ErrorTypeNotSupported, f} }
func duplicateAt(f string) wantErr    { return wantErr{field.ErrorTypeDuplicate, f} }

func TestValidateNode(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(n *corev1.Node)
		want   []wantErr
	}{
		{"empty", func(*corev1.Node) {}, nil},
		{"taints", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "a", Effect: corev1.TaintEffectNoSchedule}, {Key: "a", Effect: corev1.TaintEffectNoExecute}}
		}, nil},
		// kube reports taints under metadata
		{"bad taint", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "a b", Value: "x y", Effect: "Sometimes"}, {Key: "c"}}
		}, []wantErr{inv("metadata.taints[0].key"), inv("metadata.taints[0].value"), notSupportedAt("metadata.taints[0].effect"),
			req("metadata.taints[1].effect")}},
		{"duplicate taint", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "a", Effect: corev1.TaintEffectNoSchedule}, {Key: "a", Value: "v", Effect: corev1.TaintEffectNoSchedule}}
		}, []wantErr{duplicateAt("metadata.taints[1]")}},
		{"taints annotation", func(n *corev1.Node) {
			n.Annotations = map[string]string{corev1.TaintsAnnotationKey: `[{"key":"a b","effect":"NoSchedule"}]`}
		}, []wantErr{inv("metadata.annotations.scheduler.alpha.kubernetes.io/taints[0].key")}},
		{"taints annotation not json", func(n *corev1.Node) {
			n.Annotations = map[string]string{corev1.TaintsAnnotationKey: `{`}
		}, []wantErr{inv("metadata.annotations")}},
		{"pod cidrs", func(n *corev1.Node) { n.Spec.PodCIDRs = []string{"10.0.0.0/24", "fd00::/64"} }, nil},
		{"bad pod cidr", func(n *corev1.Node) { n.Spec.PodCIDRs = []string{"10.0.0.0/33"} }, []wantErr{inv("spec.podCIDRs[0]")}},
		{"two v4 cidrs", func(n *corev1.Node) { n.Spec.PodCIDRs = []string{"10.0.0.0/24", "10.1.0.0/24"} }, []wantErr{inv("spec.podCIDRs")}},
		{"negative capacity", func(n *corev1.Node) {
			n.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("-1"), corev1.ResourcePods: resource.MustParse("1.5")}
		}, []wantErr{inv("status.capacity.cpu"), inv("status.capacity.pods")}},
		{"declared features", func(n *corev1.Node) { n.Status.DeclaredFeatures = []string{"B", "A", "A", "lower"} },
			[]wantErr{inv("status.declaredFeatures[1]"), duplicateAt("status.declaredFeatures[2]"), inv("status.declaredFeatures[3]")}},
		{"avoid pods", func(n *corev1.Node) {
			n.Annotations = map[string]string{corev1.PreferAvoidPodsAnnotationKey: `{"preferAvoidPods":[{"podSignature":{}}]}`}
		}, []wantErr{req("metadata.annotations.scheduler.alpha.kubernetes.io/preferAvoidPods[0].PodSignature")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := &corev1.Node{}
			tt.mutate(n)
			checkErrs(t, NodeStrategy{}.Validate(context.Background(), n), tt.want...)
		})
	}
}

func TestValidateNodeUpdate(t *testing.T) {
	old := &corev1.Node{Spec: corev1.NodeSpec{PodCIDRs: []string{"10.0.0.0/24"}, ProviderID: "aws://a"}}
	tests := []struct {
		name   string
		mutate func(n *corev1.Node)
		want   []wantErr
	}{
		{"unchanged", func(*corev1.Node) {}, nil},
		{"unschedulable", func(n *corev1.Node) { n.Spec.Unschedulable = true }, nil},
		{"pod cidr changed", func(n *corev1.Node) { n.Spec.PodCIDRs = []string{"10.1.0.0/24"} }, []wantErr{forb("spec.podCIDRs")}},
		{"provider id changed", func(n *corev1.Node) { n.Spec.ProviderID = "aws://b" }, []wantErr{inv("spec.providerID")}},
		{"provider id cleared", func(n *corev1.Node) { n.Spec.ProviderID = "" }, []wantErr{inv("spec.providerID")}},
		{"external id", func(n *corev1.Node) { n.Spec.DoNotUseExternalID = "x" }, []wantErr{forb("spec.externalID")}},
		{"duplicate address", func(n *corev1.Node) {
			a := corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}
			n.Status.Addresses = []corev1.NodeAddress{a, a}
		}, []wantErr{duplicateAt("status.addresses[1]")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := old.DeepCopy()
			tt.mutate(n)
			checkErrs(t, NodeStatusStrategy{}.ValidateUpdate(context.Background(), n, old), tt.want...)
		})
	}
}

func TestNodePrepareAndDefaults(t *testing.T) {
	ctx := context.Background()
	n := &corev1.Node{
		Spec:   corev1.NodeSpec{ConfigSource: &corev1.NodeConfigSource{}, Unschedulable: true},
		Status: corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1.0001")}},
	}
	NodeStrategy{}.Default(n)
	if got := n.Status.Allocatable[corev1.ResourceCPU]; got.String() != "1001m" {
		t.Errorf("allocatable cpu = %s, want capacity rounded up to 1001m", got.String())
	}
	NodeStrategy{}.PrepareForCreate(ctx, n)
	if n.Spec.ConfigSource != nil || n.Status.Capacity == nil {
		t.Errorf("create: configSource %v dropped? status %v kept?", n.Spec.ConfigSource, n.Status)
	}
	if got := (NodeStrategy{}).Fields(n)["spec.unschedulable"]; got != "true" {
		t.Errorf("spec.unschedulable field = %q", got)
	}
	upd := n.DeepCopy()
	upd.Status = corev1.NodeStatus{}
	upd.Spec.Unschedulable = false
	NodeStrategy{}.PrepareForUpdate(ctx, upd, n)
	if upd.Status.Capacity == nil {
		t.Error("update of the main resource changed the status")
	}
	st := n.DeepCopy()
	st.Spec.Unschedulable = false
	st.Status.Phase = corev1.NodeRunning
	NodeStatusStrategy{}.PrepareForUpdate(ctx, st, n)
	if !st.Spec.Unschedulable || st.Status.Phase != corev1.NodeRunning {
		t.Errorf("status update: spec %+v status phase %q", st.Spec, st.Status.Phase)
	}
}
