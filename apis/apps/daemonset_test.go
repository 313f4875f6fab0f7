package apps

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// newDaemonSet is a valid, defaulted daemon set.
func newDaemonSet() *appsv1.DaemonSet {
	return defaulted(DaemonSetStrategy{}, &appsv1.DaemonSet{
		ObjectMeta: meta("agent"),
		Spec:       appsv1.DaemonSetSpec{Selector: selector(), Template: template()},
	})
}

func TestDaemonSetDefaults(t *testing.T) {
	ds := newDaemonSet()
	us := ds.Spec.UpdateStrategy
	if us.Type != appsv1.RollingUpdateDaemonSetStrategyType || *us.RollingUpdate.MaxUnavailable != intstr.FromInt32(1) ||
		*us.RollingUpdate.MaxSurge != intstr.FromInt32(0) || *ds.Spec.RevisionHistoryLimit != 10 {
		t.Errorf("spec = %+v", ds.Spec)
	}
	onDelete := &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}}}
	DaemonSetStrategy{}.Default(onDelete)
	if onDelete.Spec.UpdateStrategy.RollingUpdate != nil {
		t.Error("OnDelete got a rollingUpdate")
	}
}

func TestValidateDaemonSet(t *testing.T) {
	ru := func(ds *appsv1.DaemonSet) *appsv1.RollingUpdateDaemonSet { return ds.Spec.UpdateStrategy.RollingUpdate }
	tests := []struct {
		name   string
		mutate func(*appsv1.DaemonSet)
		want   []wantErr
	}{
		{"valid", func(*appsv1.DaemonSet) {}, nil},
		{"no selector", func(ds *appsv1.DaemonSet) { ds.Spec.Selector = nil }, []wantErr{inv("spec.template.metadata.labels")}},
		{"empty selector", func(ds *appsv1.DaemonSet) { ds.Spec.Selector = &metav1.LabelSelector{} }, []wantErr{inv("spec.selector")}},
		{"selector mismatch", func(ds *appsv1.DaemonSet) { ds.Spec.Template.Labels = nil }, []wantErr{inv("spec.template.metadata.labels")}},
		{"restart on failure", func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure },
			[]wantErr{unsupp("spec.template.spec.restartPolicy")}},
		{"active deadline", func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.ActiveDeadlineSeconds = ptr.To[int64](1) },
			[]wantErr{forb("spec.template.spec.activeDeadlineSeconds")}},
		{"negative minReadySeconds", func(ds *appsv1.DaemonSet) { ds.Spec.MinReadySeconds = -1 }, []wantErr{inv("spec.minReadySeconds")}},
		{"negative revisionHistoryLimit", func(ds *appsv1.DaemonSet) { ds.Spec.RevisionHistoryLimit = ptr.To[int32](-1) },
			[]wantErr{inv("spec.revisionHistoryLimit")}},
		{"on delete", func(ds *appsv1.DaemonSet) { ds.Spec.UpdateStrategy.Type = appsv1.OnDeleteDaemonSetStrategyType }, nil},
		{"bad strategy", func(ds *appsv1.DaemonSet) { ds.Spec.UpdateStrategy.Type = "Blue" }, []wantErr{unsupp("spec.updateStrategy")}},
		{"rolling update missing", func(ds *appsv1.DaemonSet) { ds.Spec.UpdateStrategy.RollingUpdate = nil },
			[]wantErr{req("spec.updateStrategy.rollingUpdate")}},
		{"surge only", func(ds *appsv1.DaemonSet) {
			ru(ds).MaxUnavailable, ru(ds).MaxSurge = ptr.To(intstr.FromInt32(0)), ptr.To(intstr.FromString("10%"))
		}, nil},
		{"both set", func(ds *appsv1.DaemonSet) { ru(ds).MaxSurge = ptr.To(intstr.FromInt32(1)) },
			[]wantErr{inv("spec.updateStrategy.rollingUpdate.maxSurge")}},
		{"both zero", func(ds *appsv1.DaemonSet) { ru(ds).MaxUnavailable = ptr.To(intstr.FromString("0%")) },
			[]wantErr{req("spec.updateStrategy.rollingUpdate.maxUnavailable")}},
		{"over 100%", func(ds *appsv1.DaemonSet) { ru(ds).MaxUnavailable = ptr.To(intstr.FromString("101%")) },
			[]wantErr{inv("spec.updateStrategy.rollingUpdate.maxUnavailable")}},
		{"bad percent", func(ds *appsv1.DaemonSet) { ru(ds).MaxUnavailable = ptr.To(intstr.FromString("1.5%")) },
			[]wantErr{inv("spec.updateStrategy.rollingUpdate.maxUnavailable"), req("spec.updateStrategy.rollingUpdate.maxUnavailable")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds := newDaemonSet()
			tt.mutate(ds)
			checkErrs(t, DaemonSetStrategy{}.Validate(ctx, ds), tt.want...)
			checkErrs(t, DaemonSetStrategy{}.ValidateUpdate(ctx, ds, ds.DeepCopy()), tt.want...)
		})
	}
	ds := newDaemonSet()
	ds.Spec.Selector.MatchLabels["x"] = "y"
	ds.Spec.Template.Labels["x"] = "y"
	checkErrs(t, DaemonSetStrategy{}.ValidateUpdate(ctx, ds, newDaemonSet()), inv("spec.selector"))
}

func TestDaemonSetTemplateGeneration(t *testing.T) {
	s := DaemonSetStrategy{}
	ds := newDaemonSet()
	ds.Status.NumberReady = 2
	s.PrepareForCreate(ctx, ds)
	if TemplateGeneration(ds) != 1 || ds.Generation != 1 || ds.Status.NumberReady != 0 {
		t.Fatalf("after create: template generation %d, generation %d", TemplateGeneration(ds), ds.Generation)
	}
	given := newDaemonSet()
	given.Annotations = map[string]string{appsv1.DeprecatedTemplateGeneration: "4"}
	s.PrepareForCreate(ctx, given)
	if TemplateGeneration(given) != 4 {
		t.Errorf("given template generation = %d, want 4", TemplateGeneration(given))
	}

	old := ds
	tests := []struct {
		name    string
		mutate  func(*appsv1.DaemonSet)
		gen, tg int64
	}{
		{"unchanged", func(*appsv1.DaemonSet) {}, 1, 1},
		{"client sets template generation", func(d *appsv1.DaemonSet) { d.Annotations[appsv1.DeprecatedTemplateGeneration] = "9" }, 1, 1},
		{"client drops annotation", func(d *appsv1.DaemonSet) { d.Annotations = nil }, 1, 1},
		{"min ready", func(d *appsv1.DaemonSet) { d.Spec.MinReadySeconds = 5 }, 2, 1},
		{"template", func(d *appsv1.DaemonSet) { d.Spec.Template.Spec.Containers[0].Image = "x" }, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := old.DeepCopy()
			tt.mutate(d)
			s.PrepareForUpdate(ctx, d, old)
			if d.Generation != tt.gen || TemplateGeneration(d) != tt.tg {
				t.Errorf("generation %d, template generation %d; want %d, %d", d.Generation, TemplateGeneration(d), tt.gen, tt.tg)
			}
		})
	}
}

func TestDaemonSetStatus(t *testing.T) {
	s := DaemonSetStatusStrategy{}
	old := newDaemonSet()
	DaemonSetStrategy{}.PrepareForCreate(ctx, old)
	old.Status.CollisionCount = ptr.To[int32](2)
	ds := old.DeepCopy()
	ds.Spec.MinReadySeconds = 9
	ds.Annotations[appsv1.DeprecatedTemplateGeneration] = "7"
	ds.Status.NumberReady = 3
	s.PrepareForUpdate(ctx, ds, old)
	if ds.Spec.MinReadySeconds != 0 || TemplateGeneration(ds) != 1 || ds.Status.NumberReady != 3 {
		t.Errorf("status update changed more than status: %+v %v", ds.Spec, ds.Annotations)
	}
	checkErrs(t, s.ValidateUpdate(ctx, ds, old))
	ds.Status = appsv1.DaemonSetStatus{
		CurrentNumberScheduled: -1, NumberMisscheduled: -1, DesiredNumberScheduled: -1, NumberReady: -1, ObservedGeneration: -1,
		UpdatedNumberScheduled: -1, NumberAvailable: -1, NumberUnavailable: -1, CollisionCount: ptr.To[int32](1),
	}
	checkErrs(t, s.ValidateUpdate(ctx, ds, old),
		inv("status.currentNumberScheduled"), inv("status.numberMisscheduled"), inv("status.desiredNumberScheduled"),
		inv("status.numberReady"), inv("status.observedGeneration"), inv("status.updatedNumberScheduled"),
		inv("status.numberAvailable"), inv("status.numberUnavailable"), inv("status.collisionCount"))
}
