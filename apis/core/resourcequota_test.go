package core

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestValidateResourceQuota(t *testing.T) {
	exists := func(s corev1.ResourceQuotaScope) corev1.ScopedResourceSelectorRequirement {
		return corev1.ScopedResourceSelectorRequirement{ScopeName: s, Operator: corev1.ScopeSelectorOpExists}
	}
	tests := []struct {
		name string
		spec corev1.ResourceQuotaSpec
		want []wantErr
	}{
		{"valid", corev1.ResourceQuotaSpec{Hard: resources("pods", "10", "requests.cpu", "4", "example.com/gpu", "2",
			"requests.hugepages-2Mi", "4Mi", "count/deployments.apps", "3")}, nil},
		{"negative", corev1.ResourceQuotaSpec{Hard: resources("memory", "-1")}, []wantErr{inv("spec.hard[memory]")}},
		{"fractional pods", corev1.ResourceQuotaSpec{Hard: resources("pods", "1.5")}, []wantErr{inv("spec.hard[pods]")}},
		{"unknown resource", corev1.ResourceQuotaSpec{Hard: resources("gpus", "1")},
			[]wantErr{inv("spec.hard[gpus]"), inv("spec.hard[gpus]")}},
		{"scoped", corev1.ResourceQuotaSpec{Hard: resources("pods", "1"), Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}}, nil},
		{"scope not for resource", corev1.ResourceQuotaSpec{Hard: resources("cpu", "1"),
			Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}}, []wantErr{inv("spec.scopes")}},
		{"unknown scope", corev1.ResourceQuotaSpec{Scopes: []corev1.ResourceQuotaScope{"Sometimes"}}, []wantErr{inv("spec.scopes")}},
		{"conflicting scopes", corev1.ResourceQuotaSpec{Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeTerminating,
			corev1.ResourceQuotaScopeNotTerminating}}, []wantErr{inv("spec.scopes")}},
		{"selector", corev1.ResourceQuotaSpec{Hard: resources("pods", "1"), ScopeSelector: &corev1.ScopeSelector{
			MatchExpressions: []corev1.ScopedResourceSelectorRequirement{exists(corev1.ResourceQuotaScopeBestEffort),
				{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"high"}}}}}, nil},
		{"selector operators", corev1.ResourceQuotaSpec{ScopeSelector: &corev1.ScopeSelector{
			MatchExpressions: []corev1.ScopedResourceSelectorRequirement{
				{ScopeName: corev1.ResourceQuotaScopeBestEffort, Operator: corev1.ScopeSelectorOpIn},
				{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpExists, Values: []string{"x"}}}}},
			[]wantErr{inv("spec.scopeSelector.matchExpressions.operator"), req("spec.scopeSelector.matchExpressions.values"),
				inv("spec.scopeSelector.matchExpressions.values")}},
		{"selector conflict", corev1.ResourceQuotaSpec{ScopeSelector: &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{
			exists(corev1.ResourceQuotaScopeBestEffort), exists(corev1.ResourceQuotaScopeNotBestEffort)}}},
			[]wantErr{inv("spec.scopeSelector.matchExpressions")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := &corev1.ResourceQuota{Spec: tt.spec}
			checkErrs(t, ResourceQuotaStrategy{}.Validate(context.Background(), q), tt.want...)
		})
	}
}

func TestResourceQuotaUpdateAndStatus(t *testing.T) {
	ctx := context.Background()
	old := &corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{Hard: resources("pods", "1"),
		Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}}}
	q := old.DeepCopy()
	q.Spec.Scopes = nil
	checkErrs(t, ResourceQuotaStrategy{}.ValidateUpdate(ctx, q, old), inv("spec.scopes"))

	q = old.DeepCopy()
	q.Status.Used = resources("pods", "1")
	ResourceQuotaStrategy{}.PrepareForUpdate(ctx, q, old)
	if q.Status.Used != nil {
		t.Error("main resource update changed the status")
	}
	q.Status.Used = resources("pods", "-1")
	q.Spec.Hard = nil
	ResourceQuotaStatusStrategy{}.PrepareForUpdate(ctx, q, old)
	if q.Spec.Hard == nil {
		t.Error("status update changed the spec")
	}
	checkErrs(t, ResourceQuotaStatusStrategy{}.ValidateUpdate(ctx, q, old), inv("status.used[pods]"))

	w := ResourceQuotaStrategy{}.WarningsOnCreate(ctx, &corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{
		Hard: resources("cpu", "2", "limits.cpu", "1")}})
	if len(w) != 1 || w[0] != "ResourceQuota cpu (2) should be less than limits.cpu (1)" {
		t.Errorf("warnings = %q", w)
	}
}
