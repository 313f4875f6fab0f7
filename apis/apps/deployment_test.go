package apps

import (
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// newDeployment is a valid, defaulted deployment.
func newDeployment() *appsv1.Deployment {
	return defaulted(DeploymentStrategy{}, &appsv1.Deployment{
		ObjectMeta: meta("web"),
		Spec:       appsv1.DeploymentSpec{Selector: selector(), Template: template()},
	})
}

func TestDeploymentDefaults(t *testing.T) {
	d := newDeployment()
	pct := intstr.FromString("25%")
	want := appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](1),
		Strategy: appsv1.DeploymentStrategy{
			Type:          appsv1.RollingUpdateDeploymentStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &pct, MaxSurge: &pct},
		},
		RevisionHistoryLimit:    ptr.To[int32](10),
		ProgressDeadlineSeconds: ptr.To[int32](600),
	}
	d.Spec.Selector, d.Spec.Template = nil, corev1.PodTemplateSpec{}
	if !reflect.DeepEqual(d.Spec, want) {
		t.Errorf("spec = %+v\nwant %+v", d.Spec, want)
	}

	set := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{
		Replicas:                ptr.To[int32](0),
		Strategy:                appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
		RevisionHistoryLimit:    ptr.To[int32](0),
		ProgressDeadlineSeconds: ptr.To[int32](30),
	}}
	DeploymentStrategy{}.Default(set)
	if *set.Spec.Replicas != 0 || set.Spec.Strategy.RollingUpdate != nil || *set.Spec.RevisionHistoryLimit != 0 || *set.Spec.ProgressDeadlineSeconds != 30 {
		t.Errorf("defaults overrode set fields: %+v", set.Spec)
	}

	partial := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Strategy: appsv1.DeploymentStrategy{
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: ptr.To(intstr.FromInt32(0))},
	}}}
	DeploymentStrategy{}.Default(partial)
	if ru := partial.Spec.Strategy.RollingUpdate; ru.MaxSurge.IntVal != 0 || ru.MaxUnavailable.StrVal != "25%" {
		t.Errorf("rollingUpdate = %+v", ru)
	}
}

func TestValidateDeployment(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*appsv1.Deployment)
		want   []wantErr
	}{
		{"valid", func(*appsv1.Deployment) {}, nil},
		{"negative replicas", func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](-1) }, []wantErr{inv("spec.replicas")}},
		{"no selector", func(d *appsv1.Deployment) { d.Spec.Selector = nil },
			[]wantErr{req("spec.selector"), inv("spec.template.metadata.labels")}},
		{"empty selector", func(d *appsv1.Deployment) { d.Spec.Selector = &metav1.LabelSelector{} }, []wantErr{inv("spec.selector")}},
		{"bad selector value", func(d *appsv1.Deployment) { d.Spec.Selector.MatchLabels["app"] = "-x-" },
			[]wantErr{inv("spec.selector.matchLabels"), inv("spec.selector")}},
		{"bad selector operator", func(d *appsv1.Deployment) {
			d.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Near"}}
		}, []wantErr{inv("spec.selector.matchExpressions[0].operator"), inv("spec.selector")}},
		{"selector mismatch", func(d *appsv1.Deployment) { d.Spec.Template.Labels = map[string]string{"app": "db"} },
			[]wantErr{inv("spec.template.metadata.labels")}},
		{"restart never", func(d *appsv1.Deployment) { d.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever },
			[]wantErr{unsupp("spec.template.spec.restartPolicy")}},
		{"active deadline", func(d *appsv1.Deployment) { d.Spec.Template.Spec.ActiveDeadlineSeconds = ptr.To[int64](5) },
			[]wantErr{forb("spec.template.spec.activeDeadlineSeconds")}},
		{"bad strategy", func(d *appsv1.Deployment) { d.Spec.Strategy.Type = "Blue" }, []wantErr{unsupp("spec.strategy")}},
		{"recreate with rolling update", func(d *appsv1.Deployment) { d.Spec.Strategy.Type = appsv1.RecreateDeploymentStrategyType },
			[]wantErr{forb("spec.strategy.rollingUpdate")}},
		{"recreate", func(d *appsv1.Deployment) {
			d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
		}, nil},
		{"rolling update missing", func(d *appsv1.Deployment) { d.Spec.Strategy.RollingUpdate = nil },
			[]wantErr{req("spec.strategy.rollingUpdate")}},
		{"both zero", func(d *appsv1.Deployment) {
			d.Spec.Strategy.RollingUpdate.MaxSurge = ptr.To(intstr.FromInt32(0))
			d.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("0%"))
		}, []wantErr{inv("spec.strategy.rollingUpdate.maxUnavailable")}},
		{"surge only", func(d *appsv1.Deployment) { d.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(0)) }, nil},
		{"bad percent", func(d *appsv1.Deployment) { d.Spec.Strategy.RollingUpdate.MaxSurge = ptr.To(intstr.FromString("half")) },
			[]wantErr{inv("spec.strategy.rollingUpdate.maxSurge")}},
		{"negative surge", func(d *appsv1.Deployment) { d.Spec.Strategy.RollingUpdate.MaxSurge = ptr.To(intstr.FromInt32(-1)) },
			[]wantErr{inv("spec.strategy.rollingUpdate.maxSurge")}},
		{"unavailable over 100%", func(d *appsv1.Deployment) {
			d.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("101%"))
		}, []wantErr{inv("spec.strategy.rollingUpdate.maxUnavailable")}},
		{"surge over 100% allowed", func(d *appsv1.Deployment) { d.Spec.Strategy.RollingUpdate.MaxSurge = ptr.To(intstr.FromString("200%")) }, nil},
		{"negative minReadySeconds", func(d *appsv1.Deployment) { d.Spec.MinReadySeconds = -1 }, []wantErr{inv("spec.minReadySeconds")}},
		{"negative revisionHistoryLimit", func(d *appsv1.Deployment) { d.Spec.RevisionHistoryLimit = ptr.To[int32](-1) },
			[]wantErr{inv("spec.revisionHistoryLimit")}},
		{"progress deadline not above minReady", func(d *appsv1.Deployment) { d.Spec.MinReadySeconds = 600 },
			[]wantErr{inv("spec.progressDeadlineSeconds")}},
		{"negative progress deadline", func(d *appsv1.Deployment) { d.Spec.ProgressDeadlineSeconds = ptr.To[int32](-1) },
			[]wantErr{inv("spec.progressDeadlineSeconds"), inv("spec.progressDeadlineSeconds")}},
		{"rollback annotation", func(d *appsv1.Deployment) { d.Annotations = map[string]string{appsv1.DeprecatedRollbackTo: "2"} }, nil},
		{"negative rollback", func(d *appsv1.Deployment) { d.Annotations = map[string]string{appsv1.DeprecatedRollbackTo: "-2"} },
			[]wantErr{inv("spec.rollback.version")}},
		{"bad rollback", func(d *appsv1.Deployment) { d.Annotations = map[string]string{appsv1.DeprecatedRollbackTo: "x"} },
			[]wantErr{inv("metadata.annotations[deprecated.deployment.rollback.to]")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDeployment()
			tt.mutate(d)
			checkErrs(t, DeploymentStrategy{}.Validate(ctx, d), tt.want...)
			checkErrs(t, DeploymentStrategy{}.ValidateUpdate(ctx, d, d.DeepCopy()), tt.want...)
		})
	}
}

func TestDeploymentMessages(t *testing.T) {
	d := newDeployment()
	d.Spec.Template.Labels = map[string]string{"app": "db"}
	d.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	d.Spec.Strategy.RollingUpdate.MaxSurge = ptr.To(intstr.FromInt32(0))
	d.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(0))
	errs := DeploymentStrategy{}.Validate(ctx, d)
	checkDetail(t, errs, "spec.template.metadata.labels", "`selector` does not match template `labels`")
	checkDetail(t, errs, "spec.strategy.rollingUpdate.maxUnavailable", "may not be 0 when `maxSurge` is 0")
	if got := errs.ToAggregate().Error(); !contains(got, `spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"`) {
		t.Errorf("message = %s", got)
	}
	d = newDeployment()
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}}
	errs = DeploymentStrategy{}.ValidateUpdate(ctx, d, newDeployment())
	checkDetail(t, errs, "spec.selector", "field is immutable")
}

func TestDeploymentPrepare(t *testing.T) {
	s := DeploymentStrategy{}
	d := newDeployment()
	d.Generation, d.Status = 7, appsv1.DeploymentStatus{Replicas: 3}
	s.PrepareForCreate(ctx, d)
	if d.Generation != 1 || d.Status.Replicas != 0 {
		t.Errorf("after create: generation %d, status %+v", d.Generation, d.Status)
	}

	old := newDeployment()
	old.Generation, old.Status = 4, appsv1.DeploymentStatus{Replicas: 2}
	tests := []struct {
		name   string
		mutate func(*appsv1.Deployment)
		gen    int64
	}{
		{"unchanged", func(*appsv1.Deployment) {}, 4},
		{"labels", func(d *appsv1.Deployment) { d.Labels = map[string]string{"a": "b"} }, 4},
		{"status", func(d *appsv1.Deployment) { d.Status.Replicas = 9 }, 4},
		{"replicas", func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](5) }, 5},
		{"annotations", func(d *appsv1.Deployment) { d.Annotations = map[string]string{"a": "b"} }, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := old.DeepCopy()
			tt.mutate(d)
			s.PrepareForUpdate(ctx, d, old)
			if d.Generation != tt.gen || d.Status.Replicas != 2 {
				t.Errorf("generation %d (want %d), status %+v", d.Generation, tt.gen, d.Status)
			}
		})
	}
}

func TestDeploymentStatus(t *testing.T) {
	s := DeploymentStatusStrategy{}
	old := newDeployment()
	old.Labels = map[string]string{"a": "b"}
	old.Status.CollisionCount = ptr.To[int32](2)
	d := old.DeepCopy()
	d.Spec.Replicas = ptr.To[int32](9)
	d.Labels = nil
	d.Status = appsv1.DeploymentStatus{Replicas: 3, ReadyReplicas: 2, AvailableReplicas: 2, CollisionCount: ptr.To[int32](2)}
	s.PrepareForUpdate(ctx, d, old)
	if *d.Spec.Replicas != 1 || d.Labels["a"] != "b" || d.Status.Replicas != 3 {
		t.Errorf("status update changed more than status: %+v %v", d.Spec, d.Labels)
	}
	checkErrs(t, s.ValidateUpdate(ctx, d, old))

	tests := []struct {
		name   string
		status appsv1.DeploymentStatus
		want   []wantErr
	}{
		{"negative", appsv1.DeploymentStatus{ObservedGeneration: -1, UnavailableReplicas: -1,
			TerminatingReplicas: ptr.To[int32](-1), CollisionCount: ptr.To[int32](-1)},
			[]wantErr{inv("status.observedGeneration"), inv("status.unavailableReplicas"), inv("status.terminatingReplicas"), inv("status.collisionCount")}},
		{"negative replicas", appsv1.DeploymentStatus{Replicas: -1},
			[]wantErr{inv("status.replicas"), inv("status.updatedReplicas"), inv("status.readyReplicas"), inv("status.availableReplicas")}},
		{"over replicas", appsv1.DeploymentStatus{Replicas: 1, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2},
			[]wantErr{inv("status.updatedReplicas"), inv("status.readyReplicas"), inv("status.availableReplicas")}},
		{"available over ready", appsv1.DeploymentStatus{Replicas: 3, ReadyReplicas: 1, AvailableReplicas: 2},
			[]wantErr{inv("status.availableReplicas")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDeployment()
			d.Status = tt.status
			checkErrs(t, s.ValidateUpdate(ctx, d, newDeployment()), tt.want...)
		})
	}
	for _, cc := range []*int32{nil, ptr.To[int32](1)} {
		d := old.DeepCopy()
		d.Status.CollisionCount = cc
		checkErrs(t, s.ValidateUpdate(ctx, d, old), inv("status.collisionCount"))
	}
}

func TestDeploymentWarnings(t *testing.T) {
	d := newDeployment()
	if w := (DeploymentStrategy{}).WarningsOnCreate(ctx, d); len(w) != 0 {
		t.Errorf("warnings = %v", w)
	}
	d.Name = "web.v1"
	if w := (DeploymentStrategy{}).WarningsOnCreate(ctx, d); len(w) != 1 || !contains(w[0], "a DNS label is recommended") {
		t.Errorf("warnings = %v", w)
	}
}
