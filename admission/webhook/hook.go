package webhook

import (
	"fmt"
	"time"

	"github.com/google/cel-go/cel"
	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/capstan-io/capstan/admission/policy/expr"
)

// hook is one webhook of a configuration, compiled: its selectors parsed,
// its match conditions compiled and its client made, once per generation
// of the configuration.
type hook struct {
	name          string
	configuration string
	rules         []arv1.RuleWithOperations
	failOpen      bool // failurePolicy Ignore
	namespaceSel  labels.Selector
	objectSel     labels.Selector
	conditions    []condition
	sideEffects   arv1.SideEffectClass
	timeout       time.Duration
	reviewVersion string // v1 or v1beta1, the first the webhook accepts that capstan sends
	reinvoke      bool   // reinvocationPolicy IfNeeded
	equivalent    bool   // matchPolicy Equivalent
	client        *client
	// broken is why the webhook cannot be called (a selector or match
	// condition stored before its rules tightened): its failure policy
	// decides, as for a call that failed.
	broken error
}

// condition is a compiled match condition.
type condition struct {
	name, expression string
	program          cel.Program
}

// spec is what a validating and a mutating webhook have in common.
type spec struct {
	name            string
	clientConfig    arv1.WebhookClientConfig
	rules           []arv1.RuleWithOperations
	failurePolicy   *arv1.FailurePolicyType
	namespaceSel    *metav1.LabelSelector
	objectSel       *metav1.LabelSelector
	sideEffects     *arv1.SideEffectClass
	timeoutSeconds  *int32
	reviewVersions  []string
	matchConditions []arv1.MatchCondition
	matchPolicy     *arv1.MatchPolicyType
}

func compileHook(configuration string, s spec, clients *clients) *hook {
	h := &hook{name: s.name, configuration: configuration, rules: s.rules,
		failOpen: s.failurePolicy != nil && *s.failurePolicy == arv1.Ignore, timeout: 10 * time.Second,
		equivalent: s.matchPolicy != nil && *s.matchPolicy == arv1.Equivalent}
	if s.sideEffects != nil {
		h.sideEffects = *s.sideEffects
	}
	if s.timeoutSeconds != nil {
		h.timeout = time.Duration(*s.timeoutSeconds) * time.Second
	}
	h.broken = h.compile(s, clients)
	return h
}

func (h *hook) compile(s spec, clients *clients) error {
	var err error
	if h.namespaceSel, err = selector(s.namespaceSel); err != nil {
		return fmt.Errorf("namespaceSelector: %w", err)
	}
	if h.objectSel, err = selector(s.objectSel); err != nil {
		return fmt.Errorf("objectSelector: %w", err)
	}
	for _, v := range s.reviewVersions {
		if v == "v1" || v == "v1beta1" {
			h.reviewVersion = v
			break
		}
	}
	if h.reviewVersion == "" {
		return fmt.Errorf("webhook does not accept known AdmissionReview versions (v1, v1beta1)")
	}
	c := expr.NewCompiler(false)
	for _, mc := range s.matchConditions {
		r := c.Compile(mc.Expression, expr.Decls{Authorizer: true}, true, cel.BoolType)
		if r.Err != nil {
			return fmt.Errorf("matchCondition %q: %w", mc.Name, r.Err)
		}
		h.conditions = append(h.conditions, condition{name: mc.Name, expression: mc.Expression, program: r.Program})
	}
	h.client, err = clients.get(s.clientConfig)
	return err
}

func selector(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(s)
}

func validatingSpec(h *arv1.ValidatingWebhook) spec {
	return spec{h.Name, h.ClientConfig, h.Rules, h.FailurePolicy, h.NamespaceSelector, h.ObjectSelector,
		h.SideEffects, h.TimeoutSeconds, h.AdmissionReviewVersions, h.MatchConditions, h.MatchPolicy}
}

func mutatingSpec(h *arv1.MutatingWebhook) spec {
	return spec{h.Name, h.ClientConfig, h.Rules, h.FailurePolicy, h.NamespaceSelector, h.ObjectSelector,
		h.SideEffects, h.TimeoutSeconds, h.AdmissionReviewVersions, h.MatchConditions, h.MatchPolicy}
}
