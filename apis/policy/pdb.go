// Package policy holds the strategy of policy/v1 PodDisruptionBudgets and
// the access to them the pods/eviction subresource needs.
package policy

import (
	"context"

	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// v1beta1EmptySelectorLabel is the label key of the selectors policy/v1beta1
// used for "match nothing" and "match everything". policy/v1 keeps it only
// in the exact "match none" selector.
const v1beta1EmptySelectorLabel = "pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match"

// PDBStrategy is the strategy of poddisruptionbudgets.
type PDBStrategy struct{}

var (
	_ registry.Strategy             = PDBStrategy{}
	_ registry.UnconditionalUpdater = PDBStrategy{}
)

// NamespaceScoped is true.
func (PDBStrategy) NamespaceScoped() bool { return true }

// AllowUnconditionalUpdate is false, as in kube: the eviction subresource
// counts on every update of a budget being at a known version.
func (PDBStrategy) AllowUnconditionalUpdate() bool { return false }

// PrepareForCreate clears the status, starts the generation at 1 and strips
// the v1beta1 selector label.
func (PDBStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	pdb := obj.(*policyv1.PodDisruptionBudget)
	pdb.Status = policyv1.PodDisruptionBudgetStatus{}
	pdb.Generation = 1
	stripV1beta1Label(pdb, nil)
}

// PrepareForUpdate keeps the status, bumps the generation when the spec
// changed and strips the v1beta1 selector label from a changed selector.
func (PDBStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	pdb, oldPDB := obj.(*policyv1.PodDisruptionBudget), old.(*policyv1.PodDisruptionBudget)
	pdb.Status = oldPDB.Status
	registry.CountSpecChange(pdb, oldPDB, &pdb.Spec, &oldPDB.Spec)
	stripV1beta1Label(pdb, oldPDB)
}

// stripV1beta1Label removes the v1beta1 selector label from a new or changed
// selector, unless the selector is exactly "match none" (or empty).
func stripV1beta1Label(pdb, old *policyv1.PodDisruptionBudget) {
	sel := pdb.Spec.Selector
	if sel == nil || (old != nil && apiequality.Semantic.DeepEqual(old.Spec.Selector, sel)) {
		return
	}
	matchNone := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: v1beta1EmptySelectorLabel, Operator: metav1.LabelSelectorOpExists}}}
	if apiequality.Semantic.DeepEqual(sel, matchNone) || apiequality.Semantic.DeepEqual(sel, &metav1.LabelSelector{}) {
		return
	}
	kept := sel.MatchExpressions[:0]
	for _, e := range sel.MatchExpressions {
		if e.Key != v1beta1EmptySelectorLabel {
			kept = append(kept, e)
		}
	}
	sel.MatchExpressions = kept
}

// Validate validates a new budget.
func (PDBStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return ValidatePDBSpec(&obj.(*policyv1.PodDisruptionBudget).Spec, false, field.NewPath("spec"))
}

// ValidateUpdate validates an updated budget; a selector label value that
// was invalid before stays accepted.
func (PDBStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	allowInvalid := hasInvalidLabelValue(old.(*policyv1.PodDisruptionBudget).Spec.Selector)
	return ValidatePDBSpec(&obj.(*policyv1.PodDisruptionBudget).Spec, allowInvalid, field.NewPath("spec"))
}

func hasInvalidLabelValue(sel *metav1.LabelSelector) bool {
	if sel == nil {
		return false
	}
	opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: false}
	return len(metav1validation.ValidateLabelSelector(sel, opts, nil)) > 0
}

// PDBStatusStrategy is the strategy of poddisruptionbudgets/status.
type PDBStatusStrategy struct{ PDBStrategy }

// PrepareForUpdate keeps the spec of old.
func (PDBStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*policyv1.PodDisruptionBudget).Spec = old.(*policyv1.PodDisruptionBudget).Spec
}

// ValidateUpdate validates the new status.
func (PDBStatusStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return ValidatePDBStatus(&obj.(*policyv1.PodDisruptionBudget).Status, field.NewPath("status"))
}
