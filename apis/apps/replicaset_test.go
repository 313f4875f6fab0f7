package apps

import (
	"maps"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// newReplicaSet is a valid, defaulted replica set.
func newReplicaSet() *appsv1.ReplicaSet {
	return defaulted(ReplicaSetStrategy{}, &appsv1.ReplicaSet{
		ObjectMeta: meta("web-1"),
		Spec:       appsv1.ReplicaSetSpec{Selector: selector(), Template: template()},
	})
}

func TestReplicaSetDefaults(t *testing.T) {
	if rs := newReplicaSet(); *rs.Spec.Replicas != 1 {
		t.Errorf("replicas = %d", *rs.Spec.Replicas)
	}
	rs := &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](0)}}
	ReplicaSetStrategy{}.Default(rs)
	if *rs.Spec.Replicas != 0 {
		t.Errorf("replicas = %d, want 0 kept", *rs.Spec.Replicas)
	}
}

func TestValidateReplicaSet(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*appsv1.ReplicaSet)
		want   []wantErr
	}{
		{"valid", func(*appsv1.ReplicaSet) {}, nil},
		{"negative replicas", func(rs *appsv1.ReplicaSet) { rs.Spec.Replicas = ptr.To[int32](-1) }, []wantErr{inv("spec.replicas")}},
		{"negative minReadySeconds", func(rs *appsv1.ReplicaSet) { rs.Spec.MinReadySeconds = -1 }, []wantErr{inv("spec.minReadySeconds")}},
		{"no selector", func(rs *appsv1.ReplicaSet) { rs.Spec.Selector = nil },
			[]wantErr{req("spec.selector"), inv("spec.template.metadata.labels")}},
		{"empty selector", func(rs *appsv1.ReplicaSet) { rs.Spec.Selector = &metav1.LabelSelector{} }, []wantErr{inv("spec.selector")}},
		{"selector mismatch", func(rs *appsv1.ReplicaSet) { rs.Spec.Template.Labels = nil }, []wantErr{inv("spec.template.metadata.labels")}},
		{"expression selector", func(rs *appsv1.ReplicaSet) {
			rs.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "api"}},
			}}
		}, nil},
		{"restart on failure", func(rs *appsv1.ReplicaSet) { rs.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure },
			[]wantErr{unsupp("spec.template.spec.restartPolicy")}},
		{"active deadline", func(rs *appsv1.ReplicaSet) { rs.Spec.Template.Spec.ActiveDeadlineSeconds = ptr.To[int64](1) },
			[]wantErr{forb("spec.template.spec.activeDeadlineSeconds")}},
		{"invalid pod", func(rs *appsv1.ReplicaSet) { rs.Spec.Template.Spec.Containers = nil },
			[]wantErr{req("spec.template.spec.containers")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := newReplicaSet()
			tt.mutate(rs)
			checkErrs(t, ReplicaSetStrategy{}.Validate(ctx, rs), tt.want...)
			checkErrs(t, ReplicaSetStrategy{}.ValidateUpdate(ctx, rs, rs.DeepCopy()), tt.want...)
		})
	}
	rs := newReplicaSet()
	rs.Spec.Selector.MatchLabels["tier"] = "front"
	rs.Spec.Template.Labels["tier"] = "front"
	checkErrs(t, ReplicaSetStrategy{}.ValidateUpdate(ctx, rs, newReplicaSet()), inv("spec.selector"))
}

func TestReplicaSetPrepare(t *testing.T) {
	s := ReplicaSetStrategy{}
	rs := newReplicaSet()
	rs.Status.Replicas, rs.Generation = 3, 5
	s.PrepareForCreate(ctx, rs)
	if rs.Generation != 1 || rs.Status.Replicas != 0 {
		t.Errorf("after create: %d %+v", rs.Generation, rs.Status)
	}
	old := newReplicaSet()
	old.Generation, old.Status.Replicas = 2, 1
	rs = old.DeepCopy()
	rs.Annotations = map[string]string{"a": "b"}
	rs.Status.Replicas = 7
	s.PrepareForUpdate(ctx, rs, old)
	if rs.Generation != 2 || rs.Status.Replicas != 1 {
		t.Errorf("annotation update: generation %d, status %+v", rs.Generation, rs.Status)
	}
	rs.Spec.Replicas = ptr.To[int32](4)
	s.PrepareForUpdate(ctx, rs, old)
	if rs.Generation != 3 {
		t.Errorf("spec update: generation %d", rs.Generation)
	}
}

func TestReplicaSetStatus(t *testing.T) {
	s := ReplicaSetStatusStrategy{}
	old := newReplicaSet()
	rs := old.DeepCopy()
	rs.Spec.Replicas = ptr.To[int32](8)
	rs.Status = appsv1.ReplicaSetStatus{Replicas: 2, FullyLabeledReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 1}
	s.PrepareForUpdate(ctx, rs, old)
	if *rs.Spec.Replicas != 1 || rs.Status.Replicas != 2 {
		t.Errorf("spec %d, status %+v", *rs.Spec.Replicas, rs.Status)
	}
	checkErrs(t, s.ValidateUpdate(ctx, rs, old))
	tests := []struct {
		name   string
		status appsv1.ReplicaSetStatus
		want   []wantErr
	}{
		{"negative", appsv1.ReplicaSetStatus{ObservedGeneration: -1, TerminatingReplicas: ptr.To[int32](-1)},
			[]wantErr{inv("status.observedGeneration"), inv("status.terminatingReplicas")}},
		{"over replicas", appsv1.ReplicaSetStatus{Replicas: 1, FullyLabeledReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2},
			[]wantErr{inv("status.fullyLabeledReplicas"), inv("status.readyReplicas"), inv("status.availableReplicas")}},
		{"available over ready", appsv1.ReplicaSetStatus{Replicas: 2, AvailableReplicas: 1}, []wantErr{inv("status.availableReplicas")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := old.DeepCopy()
			rs.Status = tt.status
			checkErrs(t, s.ValidateUpdate(ctx, rs, old), tt.want...)
		})
	}
}

func TestReplicaSetFields(t *testing.T) {
	rs := newReplicaSet()
	rs.Status.Replicas = 3
	got := ReplicaSetStrategy{}.Fields(rs)
	if len(got) != 1 || got["status.replicas"] != "3" {
		t.Errorf("fields = %v", got)
	}
	if keys := slices.Collect(maps.Keys(ReplicaSetStatusStrategy{}.Fields(&appsv1.ReplicaSet{}))); !slices.Equal(keys, []string{"status.replicas"}) {
		t.Errorf("keys = %v", keys)
	}
	if w := (ReplicaSetStrategy{}).WarningsOnCreate(ctx, &appsv1.ReplicaSet{ObjectMeta: meta("Web")}); len(w) != 1 {
		t.Errorf("warnings = %v", w)
	}
}
