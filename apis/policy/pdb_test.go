package policy

import (
	"context"
	"strings"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var ctx = context.Background()

func fields(errs field.ErrorList) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = string(e.Type) + " " + e.Field
	}
	return out
}

func pdb(mutate func(*policyv1.PodDisruptionBudgetSpec)) *policyv1.PodDisruptionBudget {
	p := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: &intstr.IntOrString{Type: intstr.Int, IntVal: 1},
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		}}
	if mutate != nil {
		mutate(&p.Spec)
	}
	return p
}

func TestValidatePDB(t *testing.T) {
	pct := func(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
	tests := []struct {
		name   string
		mutate func(*policyv1.PodDisruptionBudgetSpec)
		want   []string
	}{
		{"valid", nil, nil},
		{"both set", func(s *policyv1.PodDisruptionBudgetSpec) { s.MaxUnavailable = pct("10%") }, []string{"FieldValueInvalid spec"}},
		{"negative", func(s *policyv1.PodDisruptionBudgetSpec) { s.MinAvailable = &intstr.IntOrString{IntVal: -1} },
			[]string{"FieldValueInvalid spec.minAvailable"}},
		{"over 100%", func(s *policyv1.PodDisruptionBudgetSpec) { s.MinAvailable, s.MaxUnavailable = nil, pct("101%") },
			[]string{"FieldValueInvalid spec.maxUnavailable"}},
		{"not a percentage", func(s *policyv1.PodDisruptionBudgetSpec) { s.MinAvailable = pct("x") },
			[]string{"FieldValueInvalid spec.minAvailable"}},
		{"selector", func(s *policyv1.PodDisruptionBudgetSpec) { s.Selector.MatchLabels = map[string]string{"a": "b c"} },
			[]string{"FieldValueInvalid spec.selector.matchLabels"}},
		{"policy", func(s *policyv1.PodDisruptionBudgetSpec) {
			p := policyv1.UnhealthyPodEvictionPolicyType("Never")
			s.UnhealthyPodEvictionPolicy = &p
		}, []string{"FieldValueNotSupported spec.unhealthyPodEvictionPolicy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fields(PDBStrategy{}.Validate(ctx, pdb(tt.mutate)))
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("errors = %v, want %v", got, tt.want)
			}
		})
	}
	// The message shows kube's internal spec, keyed by Go field names.
	errs := PDBStrategy{}.Validate(ctx, pdb(func(s *policyv1.PodDisruptionBudgetSpec) { s.MaxUnavailable = pct("10%") }))
	if !strings.Contains(errs[0].Error(), `{"MinAvailable":1,`) {
		t.Errorf("message = %s", errs[0].Error())
	}
}

func TestPDBUpdateKeepsInvalidLabelValues(t *testing.T) {
	old := pdb(func(s *policyv1.PodDisruptionBudgetSpec) {
		s.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "a", Operator: metav1.LabelSelectorOpIn, Values: []string{"b c"}}}}
	})
	if errs := (PDBStrategy{}).ValidateUpdate(ctx, old.DeepCopy(), old); len(errs) != 0 {
		t.Fatalf("update of an already invalid selector: %v", errs)
	}
}

func TestPDBPrepare(t *testing.T) {
	p := pdb(func(s *policyv1.PodDisruptionBudgetSpec) {
		s.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: v1beta1EmptySelectorLabel, Operator: metav1.LabelSelectorOpDoesNotExist}}
	})
	p.Status.DisruptionsAllowed = 3
	PDBStrategy{}.PrepareForCreate(ctx, p)
	if p.Status.DisruptionsAllowed != 0 || p.Generation != 1 || len(p.Spec.Selector.MatchExpressions) != 0 {
		t.Fatalf("after create: %+v", p)
	}
	none := pdb(func(s *policyv1.PodDisruptionBudgetSpec) {
		s.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: v1beta1EmptySelectorLabel, Operator: metav1.LabelSelectorOpExists}}}
	})
	PDBStrategy{}.PrepareForCreate(ctx, none)
	if len(none.Spec.Selector.MatchExpressions) != 1 {
		t.Fatalf("the match-none selector was changed: %+v", none.Spec.Selector)
	}

	p.Status.DisruptionsAllowed = 1
	upd := p.DeepCopy()
	upd.Status.DisruptionsAllowed = 5
	upd.Spec.MinAvailable = &intstr.IntOrString{IntVal: 2}
	PDBStrategy{}.PrepareForUpdate(ctx, upd, p)
	if upd.Status.DisruptionsAllowed != 1 || upd.Generation != 2 {
		t.Fatalf("after update: %+v", upd)
	}
	st := p.DeepCopy()
	st.Spec.MinAvailable = nil
	st.Status.DisruptionsAllowed = -1
	PDBStatusStrategy{}.PrepareForUpdate(ctx, st, p)
	if st.Spec.MinAvailable == nil {
		t.Fatalf("status update changed the spec")
	}
	if got := fields(PDBStatusStrategy{}.ValidateUpdate(ctx, st, p)); strings.Join(got, ",") != "FieldValueInvalid status.disruptionsAllowed" {
		t.Fatalf("status errors = %v", got)
	}
	if (PDBStrategy{}).AllowUnconditionalUpdate() {
		t.Fatal("budgets allow unconditional updates")
	}
}
