package admissionregistration

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/apis/apiextensions"
)

// reviewVersions are the AdmissionReview versions capstan sends.
var reviewVersions = []string{"v1", "v1beta1"}

// options relax validation on update for what the old object already had,
// so that a stored object that newer rules refuse can still be changed.
type options struct {
	ignoreMatchConditions   bool
	paramsInMatchConditions bool
	requireNoSideEffects    bool
	requireReviewVersion    bool
	requireUniqueNames      bool
	allowInvalidLabelValues bool
	stored                  storedExpressions
}

// createOptions are the options of a new webhook configuration.
var createOptions = options{requireNoSideEffects: true, requireReviewVersion: true, requireUniqueNames: true}

// webhook is what validating and mutating webhooks have in common.
type webhook struct {
	name            string
	clientConfig    arv1.WebhookClientConfig
	rules           []arv1.RuleWithOperations
	failurePolicy   *arv1.FailurePolicyType
	matchPolicy     *arv1.MatchPolicyType
	namespaceSel    *metav1.LabelSelector
	objectSel       *metav1.LabelSelector
	sideEffects     *arv1.SideEffectClass
	timeoutSeconds  *int32
	reviewVersions  []string
	matchConditions []arv1.MatchCondition
}

func validatingHooks(hooks []arv1.ValidatingWebhook) []webhook {
	out := make([]webhook, len(hooks))
	for i, h := range hooks {
		out[i] = webhook{h.Name, h.ClientConfig, h.Rules, h.FailurePolicy, h.MatchPolicy, h.NamespaceSelector,
			h.ObjectSelector, h.SideEffects, h.TimeoutSeconds, h.AdmissionReviewVersions, h.MatchConditions}
	}
	return out
}

func mutatingHooks(hooks []arv1.MutatingWebhook) []webhook {
	out := make([]webhook, len(hooks))
	for i, h := range hooks {
		out[i] = webhook{h.Name, h.ClientConfig, h.Rules, h.FailurePolicy, h.MatchPolicy, h.NamespaceSelector,
			h.ObjectSelector, h.SideEffects, h.TimeoutSeconds, h.AdmissionReviewVersions, h.MatchConditions}
	}
	return out
}

// ValidateValidatingWebhookConfiguration validates a configuration; old is
// nil on create.
func ValidateValidatingWebhookConfiguration(c, old *arv1.ValidatingWebhookConfiguration) field.ErrorList {
	opts := createOptions
	if old != nil {
		opts = updateOptions(validatingHooks(c.Webhooks), validatingHooks(old.Webhooks))
	}
	return validateWebhooks(validatingHooks(c.Webhooks), opts)
}

// ValidateMutatingWebhookConfiguration validates a configuration; old is nil
// on create.
func ValidateMutatingWebhookConfiguration(c, old *arv1.MutatingWebhookConfiguration) field.ErrorList {
	opts := createOptions
	if old != nil {
		opts = updateOptions(mutatingHooks(c.Webhooks), mutatingHooks(old.Webhooks))
	}
	errs := validateWebhooks(mutatingHooks(c.Webhooks), opts)
	for i, h := range c.Webhooks {
		if p := h.ReinvocationPolicy; p != nil && !slices.Contains(reinvocationPolicies, string(*p)) {
			errs = append(errs, notSupported(field.NewPath("webhooks").Index(i).Child("reinvocationPolicy"), *p, reinvocationPolicies))
		}
	}
	return errs
}

func updateOptions(hooks, old []webhook) options {
	opts := options{
		ignoreMatchConditions: len(hooks) == len(old),
		requireNoSideEffects:  true, requireReviewVersion: true, requireUniqueNames: true,
		stored: storedExpressions{matchConditions: sets.New[string]()},
	}
	names := sets.New[string]()
	for i, h := range old {
		if opts.ignoreMatchConditions && !reflect.DeepEqual(h.matchConditions, hooks[i].matchConditions) {
			opts.ignoreMatchConditions = false
		}
		if h.sideEffects == nil || !slices.Contains(noSideEffects, string(*h.sideEffects)) {
			opts.requireNoSideEffects = false
		}
		if len(h.reviewVersions) > 0 && !slices.ContainsFunc(h.reviewVersions, isReviewVersion) {
			opts.requireReviewVersion = false
		}
		if names.Has(h.name) {
			opts.requireUniqueNames = false
		}
		names.Insert(h.name)
		if invalidSelector(h.namespaceSel) || invalidSelector(h.objectSel) {
			opts.allowInvalidLabelValues = true
		}
		for _, mc := range h.matchConditions {
			opts.stored.matchConditions.Insert(mc.Expression)
		}
	}
	return opts
}

func isReviewVersion(v string) bool { return slices.Contains(reviewVersions, v) }

func invalidSelector(sel *metav1.LabelSelector) bool {
	return sel != nil && len(metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, nil)) > 0
}

func validateWebhooks(hooks []webhook, opts options) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i := range hooks {
		path := field.NewPath("webhooks").Index(i)
		errs = append(errs, validateWebhook(&hooks[i], opts, path)...)
		errs = append(errs, validateReviewVersions(hooks[i].reviewVersions, opts.requireReviewVersion, path.Child("admissionReviewVersions"))...)
		if name := hooks[i].name; opts.requireUniqueNames && name != "" {
			if names.Has(name) {
				errs = append(errs, field.Duplicate(path.Child("name"), name))
			}
			names.Insert(name)
		}
	}
	return errs
}

func validateWebhook(h *webhook, opts options, path *field.Path) field.ErrorList {
	errs := validation.IsFullyQualifiedName(path.Child("name"), h.name)
	for i := range h.rules {
		errs = append(errs, validateRuleWithOperations(&h.rules[i], path.Child("rules").Index(i))...)
	}
	if p := h.failurePolicy; p != nil && !slices.Contains(failurePolicies, string(*p)) {
		errs = append(errs, notSupported(path.Child("failurePolicy"), *p, failurePolicies))
	}
	if p := h.matchPolicy; p != nil && !slices.Contains(matchPolicies, string(*p)) {
		errs = append(errs, notSupported(path.Child("matchPolicy"), *p, matchPolicies))
	}
	allowed := allSideEffects
	if opts.requireNoSideEffects {
		allowed = noSideEffects
	}
	if h.sideEffects == nil {
		errs = append(errs, field.Required(path.Child("sideEffects"), "must specify one of "+strings.Join(allowed, ", ")))
	} else if !slices.Contains(allowed, string(*h.sideEffects)) {
		errs = append(errs, notSupported(path.Child("sideEffects"), *h.sideEffects, allowed))
	}
	if t := h.timeoutSeconds; t != nil && (*t > 30 || *t < 1) {
		errs = append(errs, field.Invalid(path.Child("timeoutSeconds"), *t, "the timeout value must be between 1 and 30 seconds"))
	}
	selOpts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: opts.allowInvalidLabelValues}
	if h.namespaceSel != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(h.namespaceSel, selOpts, path.Child("namespaceSelector"))...)
	}
	if h.objectSel != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(h.objectSel, selOpts, path.Child("objectSelector"))...)
	}
	errs = append(errs, validateClientConfig(&h.clientConfig, path.Child("clientConfig"))...)
	if !opts.ignoreMatchConditions {
		errs = append(errs, validateMatchConditions(h.matchConditions, opts, path.Child("matchConditions"))...)
	}
	return errs
}

func validateClientConfig(cc *arv1.WebhookClientConfig, path *field.Path) field.ErrorList {
	switch {
	case (cc.URL == nil) == (cc.Service == nil):
		return field.ErrorList{field.Required(path, "exactly one of url or service is required")}
	case cc.URL != nil:
		return apiextensions.ValidateWebhookURL(path.Child("url"), *cc.URL)
	default:
		port := int32(443)
		if cc.Service.Port != nil {
			port = *cc.Service.Port
		}
		return apiextensions.ValidateWebhookService(path.Child("service"), cc.Service.Namespace, cc.Service.Name, cc.Service.Path, port)
	}
}

func validateReviewVersions(versions []string, requireKnown bool, path *field.Path) field.ErrorList {
	if len(versions) == 0 {
		return field.ErrorList{field.Required(path, "must specify one of "+strings.Join(reviewVersions, ", "))}
	}
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, v := range versions {
		if seen.Has(v) {
			errs = append(errs, field.Invalid(path.Index(i), v, "duplicate version"))
			continue
		}
		seen.Insert(v)
		for _, msg := range validation.IsDNS1035Label(v) {
			errs = append(errs, field.Invalid(path.Index(i), v, msg))
		}
	}
	if requireKnown && !slices.ContainsFunc(versions, isReviewVersion) {
		errs = append(errs, field.Invalid(path, versions, fmt.Sprintf("must include at least one of %v", strings.Join(reviewVersions, ", "))))
	}
	return errs
}
