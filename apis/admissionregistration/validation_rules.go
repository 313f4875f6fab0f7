package admissionregistration

import (
	"fmt"
	"slices"
	"strings"

	arv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The values kube accepts, sorted as its messages list them.
var (
	failurePolicies      = []string{string(arv1.Fail), string(arv1.Ignore)}
	matchPolicies        = []string{string(arv1.Equivalent), string(arv1.Exact)}
	scopes               = []string{string(arv1.AllScopes), string(arv1.ClusterScope), string(arv1.NamespacedScope)}
	operations           = []string{string(arv1.OperationAll), string(arv1.Connect), string(arv1.Create), string(arv1.Delete), string(arv1.Update)}
	mutatingOperations   = []string{string(arv1.OperationAll), string(arv1.Connect), string(arv1.Create), string(arv1.Update)}
	reinvocationPolicies = []string{string(arv1.IfNeededReinvocationPolicy), string(arv1.NeverReinvocationPolicy)}
	allSideEffects       = []string{string(arv1.SideEffectClassNone), string(arv1.SideEffectClassNoneOnDryRun), string(arv1.SideEffectClassSome), string(arv1.SideEffectClassUnknown)}
	noSideEffects        = []string{string(arv1.SideEffectClassNone), string(arv1.SideEffectClassNoneOnDryRun)}
	validationActions    = []string{string(arv1.Audit), string(arv1.Deny), string(arv1.Warn)}
	policyReasons        = []string{"Forbidden", "Invalid", "RequestEntityTooLarge"}
	patchTypes           = []string{string(arv1.PatchTypeApplyConfiguration), string(arv1.PatchTypeJSONPatch)}
)

func notSupported[T ~string](path *field.Path, v T, supported []string) *field.Error {
	return field.NotSupported(path, v, supported)
}

func validateRuleWithOperations(r *arv1.RuleWithOperations, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	ops := path.Child("operations")
	if len(r.Operations) == 0 {
		errs = append(errs, field.Required(ops, ""))
	}
	if len(r.Operations) > 1 && slices.Contains(r.Operations, arv1.OperationAll) {
		errs = append(errs, field.Invalid(ops, r.Operations, "if '*' is present, must not specify other operations"))
	}
	for i, op := range r.Operations {
		if !slices.Contains(operations, string(op)) {
			errs = append(errs, notSupported(ops.Index(i), op, operations))
		}
	}
	return append(errs, validateRule(&r.Rule, path)...)
}

func validateRule(r *arv1.Rule, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.APIGroups) == 0 {
		errs = append(errs, field.Required(path.Child("apiGroups"), ""))
	}
	if len(r.APIGroups) > 1 && slices.Contains(r.APIGroups, "*") {
		errs = append(errs, field.Invalid(path.Child("apiGroups"), r.APIGroups, "if '*' is present, must not specify other API groups"))
	}
	versions := path.Child("apiVersions")
	if len(r.APIVersions) == 0 {
		errs = append(errs, field.Required(versions, ""))
	}
	if len(r.APIVersions) > 1 && slices.Contains(r.APIVersions, "*") {
		errs = append(errs, field.Invalid(versions, r.APIVersions, "if '*' is present, must not specify other API versions"))
	}
	for i, v := range r.APIVersions {
		if v == "" {
			errs = append(errs, field.Required(versions.Index(i), ""))
		}
	}
	errs = append(errs, validateResources(r.Resources, path.Child("resources"))...)
	if r.Scope != nil && !slices.Contains(scopes, string(*r.Scope)) {
		errs = append(errs, notSupported(path.Child("scope"), *r.Scope, scopes))
	}
	return errs
}

// validateResources checks resources and resource/subresource patterns:
// "*/*" alone, "*" with subresource patterns only, and no pattern that a
// wildcard of the same resource or subresource before it already covers.
func validateResources(resources []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(resources) == 0 {
		errs = append(errs, field.Required(path, ""))
	}
	anySub, anyRes := sets.New[string](), sets.New[string]() // "x/*", "*/x"
	var doubleWildcard, wildcard, plain bool
	for i, rs := range resources {
		if rs == "" {
			errs = append(errs, field.Required(path.Index(i), ""))
			continue
		}
		doubleWildcard = doubleWildcard || rs == "*/*"
		wildcard = wildcard || rs == "*"
		res, sub, hasSub := strings.Cut(rs, "/")
		if !hasSub {
			plain = rs != "*"
			continue
		}
		if anySub.Has(res) {
			errs = append(errs, field.Invalid(path.Index(i), rs, fmt.Sprintf("if '%s/*' is present, must not specify %s", res, rs)))
		}
		if anyRes.Has(sub) {
			errs = append(errs, field.Invalid(path.Index(i), rs, fmt.Sprintf("if '*/%s' is present, must not specify %s", sub, rs)))
		}
		if sub == "*" {
			anySub.Insert(res)
		}
		if res == "*" {
			anyRes.Insert(sub)
		}
	}
	if len(resources) > 1 && doubleWildcard {
		errs = append(errs, field.Invalid(path, resources, "if '*/*' is present, must not specify other resources"))
	}
	if wildcard && plain {
		errs = append(errs, field.Invalid(path, resources, "if '*' is present, must not specify other resources without subresources"))
	}
	return errs
}

func validateMatchResources(m *arv1.MatchResources, path *field.Path) field.ErrorList {
	if m == nil {
		return nil
	}
	var errs field.ErrorList
	if m.MatchPolicy == nil {
		errs = append(errs, field.Required(path.Child("matchPolicy"), ""))
	} else if !slices.Contains(matchPolicies, string(*m.MatchPolicy)) {
		errs = append(errs, notSupported(path.Child("matchPolicy"), *m.MatchPolicy, matchPolicies))
	}
	errs = append(errs, requiredSelector(m.NamespaceSelector, path.Child("namespaceSelector"))...)
	errs = append(errs, requiredSelector(m.ObjectSelector, path.Child("objectSelector"))...)
	for i := range m.ResourceRules {
		errs = append(errs, validateNamedRule(&m.ResourceRules[i], path.Child("resourceRules").Index(i))...)
	}
	for i := range m.ExcludeResourceRules {
		errs = append(errs, validateNamedRule(&m.ExcludeResourceRules[i], path.Child("excludeResourceRules").Index(i))...)
	}
	return errs
}

// requiredSelector validates a selector of a policy's match resources,
// strictly: these types came after kube stopped accepting invalid label
// values in selectors.
func requiredSelector(sel *metav1.LabelSelector, path *field.Path) field.ErrorList {
	if sel == nil {
		return field.ErrorList{field.Required(path, "")}
	}
	return metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, path)
}

func validateNamedRule(r *arv1.NamedRuleWithOperations, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, name := range r.ResourceNames {
		for _, msg := range content.IsPathSegmentName(name) {
			errs = append(errs, field.Invalid(path.Child("resourceNames").Index(i), name, msg))
		}
		if seen.Has(name) {
			errs = append(errs, field.Duplicate(path.Child("resourceNames").Index(i), name))
		}
		seen.Insert(name)
	}
	return append(errs, validateRuleWithOperations(&r.RuleWithOperations, path)...)
}

func validateParamKind(k *arv1.ParamKind, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	av := path.Child("apiVersion")
	if k.APIVersion == "" {
		errs = append(errs, field.Required(av, ""))
	} else if strings.Count(k.APIVersion, "/") > 1 {
		errs = append(errs, field.Invalid(av, k.APIVersion, "unexpected GroupVersion string: "+k.APIVersion))
	} else {
		group, version, found := strings.Cut(k.APIVersion, "/")
		if !found {
			group, version = "", k.APIVersion
		}
		if group != "" {
			if msgs := validation.IsDNS1123Subdomain(group); len(msgs) > 0 {
				errs = append(errs, field.Invalid(av, group, strings.Join(msgs, ",")))
			}
		}
		if version == "" {
			errs = append(errs, field.Invalid(av, k.APIVersion, "version must be specified"))
		} else if msgs := validation.IsDNS1035Label(version); len(msgs) > 0 {
			errs = append(errs, field.Invalid(av, version, strings.Join(msgs, ",")))
		}
	}
	if k.Kind == "" {
		errs = append(errs, field.Required(path.Child("kind"), ""))
	} else if msgs := validation.IsDNS1035Label(strings.ToLower(k.Kind)); len(msgs) > 0 {
		errs = append(errs, field.Invalid(path.Child("kind"), k.Kind, "may have mixed case, but should otherwise match: "+strings.Join(msgs, ",")))
	}
	return errs
}

func validateParamRef(r *arv1.ParamRef, path *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	const exclusive = `name and selector are mutually exclusive`
	if r.Name != "" {
		for _, msg := range content.IsPathSegmentName(r.Name) {
			errs = append(errs, field.Invalid(path.Child("name"), r.Name, msg))
		}
		if r.Selector != nil {
			errs = append(errs, field.Forbidden(path.Child("name"), exclusive))
		}
	}
	if r.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(r.Selector, metav1validation.LabelSelectorValidationOptions{}, path.Child("selector"))...)
		if r.Name != "" {
			errs = append(errs, field.Forbidden(path.Child("selector"), exclusive))
		}
	}
	if r.Name == "" && r.Selector == nil {
		errs = append(errs, field.Required(path, `one of name or selector must be specified`))
	}
	action := path.Child("parameterNotFoundAction")
	switch {
	case r.ParameterNotFoundAction == nil || *r.ParameterNotFoundAction == "":
		errs = append(errs, field.Required(action, ""))
	case *r.ParameterNotFoundAction != arv1.DenyAction && *r.ParameterNotFoundAction != arv1.AllowAction:
		errs = append(errs, field.NotSupported(action, r.ParameterNotFoundAction, []string{string(arv1.DenyAction), string(arv1.AllowAction)}))
	}
	return errs
}

func validateValidationActions(actions []arv1.ValidationAction, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[arv1.ValidationAction]()
	for i, a := range actions {
		if !slices.Contains(validationActions, string(a)) {
			errs = append(errs, notSupported(path.Index(i), a, validationActions))
		}
		if seen.Has(a) {
			errs = append(errs, field.Duplicate(path.Index(i), a))
		}
		seen.Insert(a)
	}
	if seen.Has(arv1.Deny) && seen.Has(arv1.Warn) {
		errs = append(errs, field.Invalid(path, actions, "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"))
	}
	if len(seen) == 0 {
		errs = append(errs, field.Required(path, ""))
	}
	return errs
}

// validatePolicyName checks a binding's policyName.
func validatePolicyName(name string, path *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}
