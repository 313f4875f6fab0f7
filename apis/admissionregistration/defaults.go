package admissionregistration

import (
	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kube's v1 defaults.
const (
	defaultTimeoutSeconds int32 = 10
	defaultServicePort    int32 = 443
)

func setDefault[T any](p **T, v T) {
	if *p == nil {
		*p = &v
	}
}

// webhookDefaults sets what validating and mutating webhooks default alike.
func webhookDefaults(fp **arv1.FailurePolicyType, mp **arv1.MatchPolicyType, ns, obj **metav1.LabelSelector,
	timeout **int32, cc *arv1.WebhookClientConfig, rules []arv1.RuleWithOperations) {
	setDefault(fp, arv1.Fail)
	setDefault(mp, arv1.Equivalent)
	setDefault(ns, metav1.LabelSelector{})
	setDefault(obj, metav1.LabelSelector{})
	setDefault(timeout, defaultTimeoutSeconds)
	if cc.Service != nil {
		setDefault(&cc.Service.Port, defaultServicePort)
	}
	for i := range rules {
		setDefault(&rules[i].Scope, arv1.AllScopes)
	}
}

// DefaultValidatingWebhookConfiguration applies kube's v1 defaults.
func DefaultValidatingWebhookConfiguration(c *arv1.ValidatingWebhookConfiguration) {
	for i := range c.Webhooks {
		h := &c.Webhooks[i]
		webhookDefaults(&h.FailurePolicy, &h.MatchPolicy, &h.NamespaceSelector, &h.ObjectSelector,
			&h.TimeoutSeconds, &h.ClientConfig, h.Rules)
	}
}

// DefaultMutatingWebhookConfiguration applies kube's v1 defaults.
func DefaultMutatingWebhookConfiguration(c *arv1.MutatingWebhookConfiguration) {
	for i := range c.Webhooks {
		h := &c.Webhooks[i]
		webhookDefaults(&h.FailurePolicy, &h.MatchPolicy, &h.NamespaceSelector, &h.ObjectSelector,
			&h.TimeoutSeconds, &h.ClientConfig, h.Rules)
		setDefault(&h.ReinvocationPolicy, arv1.NeverReinvocationPolicy)
	}
}

// defaultMatchResources applies kube's defaults to a policy's match
// constraints or a binding's match resources.
func defaultMatchResources(m *arv1.MatchResources) {
	if m == nil {
		return
	}
	setDefault(&m.MatchPolicy, arv1.Equivalent)
	setDefault(&m.NamespaceSelector, metav1.LabelSelector{})
	setDefault(&m.ObjectSelector, metav1.LabelSelector{})
	for i := range m.ResourceRules {
		setDefault(&m.ResourceRules[i].Scope, arv1.AllScopes)
	}
	for i := range m.ExcludeResourceRules {
		setDefault(&m.ExcludeResourceRules[i].Scope, arv1.AllScopes)
	}
}

// DefaultValidatingAdmissionPolicy applies kube's v1 defaults.
func DefaultValidatingAdmissionPolicy(p *arv1.ValidatingAdmissionPolicy) {
	setDefault(&p.Spec.FailurePolicy, arv1.Fail)
	defaultMatchResources(p.Spec.MatchConstraints)
}

// DefaultMutatingAdmissionPolicy applies kube's v1 defaults.
func DefaultMutatingAdmissionPolicy(p *arv1.MutatingAdmissionPolicy) {
	setDefault(&p.Spec.FailurePolicy, arv1.Fail)
	defaultMatchResources(p.Spec.MatchConstraints)
}
