package admissionregistration

import (
	"context"
	"fmt"
	"slices"

	arv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The strategies of the six resources.
var (
	ValidatingWebhookConfigurationStrategy = Strategy[*arv1.ValidatingWebhookConfiguration]{kind[*arv1.ValidatingWebhookConfiguration]{
		spec:     func(c *arv1.ValidatingWebhookConfiguration) any { return c.Webhooks },
		defaults: DefaultValidatingWebhookConfiguration,
		validate: func(_ context.Context, c, old *arv1.ValidatingWebhookConfiguration) field.ErrorList {
			return ValidateValidatingWebhookConfiguration(c, old)
		},
		warnings: func(c *arv1.ValidatingWebhookConfiguration) []string {
			return excludedRuleWarnings(validatingHooks(c.Webhooks))
		},
	}}
	MutatingWebhookConfigurationStrategy = Strategy[*arv1.MutatingWebhookConfiguration]{kind[*arv1.MutatingWebhookConfiguration]{
		spec:     func(c *arv1.MutatingWebhookConfiguration) any { return c.Webhooks },
		defaults: DefaultMutatingWebhookConfiguration,
		validate: func(_ context.Context, c, old *arv1.MutatingWebhookConfiguration) field.ErrorList {
			return ValidateMutatingWebhookConfiguration(c, old)
		},
		warnings: func(c *arv1.MutatingWebhookConfiguration) []string {
			return excludedRuleWarnings(mutatingHooks(c.Webhooks))
		},
	}}
	ValidatingAdmissionPolicyStrategy = Strategy[*arv1.ValidatingAdmissionPolicy]{kind[*arv1.ValidatingAdmissionPolicy]{
		spec: func(p *arv1.ValidatingAdmissionPolicy) any { return p.Spec },
		resetStatus: func(p, old *arv1.ValidatingAdmissionPolicy) {
			p.Status = arv1.ValidatingAdmissionPolicyStatus{}
			if old != nil {
				p.Status = old.Status
			}
		},
		defaults: DefaultValidatingAdmissionPolicy,
		validate: func(_ context.Context, p, old *arv1.ValidatingAdmissionPolicy) field.ErrorList {
			return ValidateValidatingAdmissionPolicy(p, old)
		},
	}}
	ValidatingAdmissionPolicyBindingStrategy = Strategy[*arv1.ValidatingAdmissionPolicyBinding]{kind[*arv1.ValidatingAdmissionPolicyBinding]{
		spec:     func(b *arv1.ValidatingAdmissionPolicyBinding) any { return b.Spec },
		defaults: func(b *arv1.ValidatingAdmissionPolicyBinding) { defaultMatchResources(b.Spec.MatchResources) },
		validate: func(_ context.Context, b, _ *arv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
			return ValidateValidatingAdmissionPolicyBinding(b)
		},
	}}
	MutatingAdmissionPolicyStrategy = Strategy[*arv1.MutatingAdmissionPolicy]{kind[*arv1.MutatingAdmissionPolicy]{
		spec:     func(p *arv1.MutatingAdmissionPolicy) any { return p.Spec },
		defaults: DefaultMutatingAdmissionPolicy,
		validate: func(_ context.Context, p, old *arv1.MutatingAdmissionPolicy) field.ErrorList {
			return ValidateMutatingAdmissionPolicy(p, old)
		},
	}}
	MutatingAdmissionPolicyBindingStrategy = Strategy[*arv1.MutatingAdmissionPolicyBinding]{kind[*arv1.MutatingAdmissionPolicyBinding]{
		spec:     func(b *arv1.MutatingAdmissionPolicyBinding) any { return b.Spec },
		defaults: func(b *arv1.MutatingAdmissionPolicyBinding) { defaultMatchResources(b.Spec.MatchResources) },
		validate: func(_ context.Context, b, _ *arv1.MutatingAdmissionPolicyBinding) field.ErrorList {
			return ValidateMutatingAdmissionPolicyBinding(b)
		},
	}}
)

// ValidatingAdmissionPolicyStatusStrategy is the strategy of
// validatingadmissionpolicies/status: only the status changes; metadata
// but managedFields stays as it was.
type ValidatingAdmissionPolicyStatusStrategy struct {
	Strategy[*arv1.ValidatingAdmissionPolicy]
}

// NewValidatingAdmissionPolicyStatusStrategy returns the status strategy.
func NewValidatingAdmissionPolicyStatusStrategy() ValidatingAdmissionPolicyStatusStrategy {
	return ValidatingAdmissionPolicyStatusStrategy{ValidatingAdmissionPolicyStrategy}
}

// PrepareForUpdate keeps old's spec and metadata.
func (ValidatingAdmissionPolicyStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	p, prev := obj.(*arv1.ValidatingAdmissionPolicy), old.(*arv1.ValidatingAdmissionPolicy)
	managed := p.ManagedFields
	p.ObjectMeta = *prev.ObjectMeta.DeepCopy()
	p.ManagedFields = managed
	p.Spec = prev.Spec
}

// ValidateUpdate validates the status alone.
func (ValidatingAdmissionPolicyStatusStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return ValidateValidatingAdmissionPolicyStatus(obj.(*arv1.ValidatingAdmissionPolicy))
}

// WarningsOnUpdate has nothing to say of a status.
func (ValidatingAdmissionPolicyStatusStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// ExcludedResources are the virtual resources admission webhooks never
// see, kube's list.
var ExcludedResources = []schema.GroupResource{
	{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"},
	{Group: "authentication.k8s.io", Resource: "tokenreviews"},
	{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"},
	{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"},
	{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"},
	{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"},
}

// excludedRuleWarnings warns of rules that name an excluded resource
// explicitly (a wildcard group or resource is not flagged).
func excludedRuleWarnings(hooks []webhook) []string {
	var out []string
	for i, h := range hooks {
		rules := field.NewPath("webhooks").Index(i).Child("rules")
		for j, r := range h.rules {
			if slices.Contains(r.APIGroups, "*") || slices.Contains(r.Resources, "*") {
				continue
			}
			seen := sets.New[schema.GroupResource]()
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					gr := schema.GroupResource{Group: g, Resource: res}
					if slices.Contains(ExcludedResources, gr) && !seen.Has(gr) {
						seen.Insert(gr)
						out = append(out, fmt.Sprintf("%s: %s is excluded from admission webhooks; this rule will have no effect", rules.Index(j), gr))
					}
				}
			}
		}
	}
	return out
}
