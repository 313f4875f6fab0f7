package scheduling

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func fields(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, string(e.Type)+" "+e.Field)
	}
	return out
}

func TestValidatePriorityClass(t *testing.T) {
	never := corev1.PreemptNever
	tests := []struct {
		name string
		pc   schedulingv1.PriorityClass
		want []string
	}{
		{"user", schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000, PreemptionPolicy: &never}, nil},
		{"user at the bound", schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "top"}, Value: HighestUserDefinablePriority}, nil},
		{"user too high", schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "top"}, Value: HighestUserDefinablePriority + 1},
			[]string{"FieldValueForbidden value"}},
		{"system class", *SystemPriorityClasses()[0], nil},
		{"system class wrong value", schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: SystemNodeCritical}, Value: 1},
			[]string{"FieldValueForbidden metadata.name"}},
		{"system class default", schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: SystemClusterCritical},
			Value: SystemCriticalPriority, GlobalDefault: true}, []string{"FieldValueForbidden metadata.name"}},
		{"reserved name", schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "system-mine"}},
			[]string{"FieldValueForbidden metadata.name"}},
		{"bad policy", schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "p"}, PreemptionPolicy: ptr[corev1.PreemptionPolicy]("Always")},
			[]string{"FieldValueNotSupported preemptionPolicy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fields(PriorityClassStrategy{}.Validate(context.Background(), &tt.pc))
			if len(got) != len(tt.want) || (len(got) > 0 && got[0] != tt.want[0]) {
				t.Errorf("errors = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPriorityClassUpdateAndDefaults(t *testing.T) {
	ctx := context.Background()
	old := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Value: 10}
	s := PriorityClassStrategy{}
	s.Default(old)
	if *old.PreemptionPolicy != corev1.PreemptLowerPriority {
		t.Fatalf("preemptionPolicy = %v", *old.PreemptionPolicy)
	}
	s.PrepareForCreate(ctx, old)
	if old.Generation != 1 {
		t.Errorf("generation = %d", old.Generation)
	}
	pc := old.DeepCopy()
	pc.Description, pc.GlobalDefault = "changed", true
	if errs := s.ValidateUpdate(ctx, pc, old); len(errs) != 0 {
		t.Errorf("description and globalDefault change: %v", errs)
	}
	pc.Value, pc.PreemptionPolicy = 11, ptr(corev1.PreemptNever)
	got := fields(s.ValidateUpdate(ctx, pc, old))
	if len(got) != 2 || got[0] != "FieldValueForbidden value" || got[1] != "FieldValueInvalid preemptionPolicy" {
		t.Errorf("value and policy change: %v", got)
	}
}

func ptr[T any](v T) *T { return &v }
