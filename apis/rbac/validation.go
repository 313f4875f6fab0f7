package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateName is the rule of RBAC object names, and of the names a roleRef
// gives: any path segment (colons are common: system:basic-user).
func ValidateName(name string, _ bool) []string { return content.IsPathSegmentName(name) }

// ValidatePolicyRule checks one rule: verbs, and either non-resource URLs
// (cluster roles only, and nothing else) or API groups and resources.
func ValidatePolicyRule(rule rbacv1.PolicyRule, namespaced bool, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(rule.Verbs) == 0 {
		errs = append(errs, field.Required(fldPath.Child("verbs"), "verbs must contain at least one value"))
	}
	if len(rule.NonResourceURLs) > 0 {
		if namespaced {
			errs = append(errs, field.Invalid(fldPath.Child("nonResourceURLs"), rule.NonResourceURLs, "namespaced rules cannot apply to non-resource URLs"))
		}
		if len(rule.APIGroups) > 0 || len(rule.Resources) > 0 || len(rule.ResourceNames) > 0 {
			errs = append(errs, field.Invalid(fldPath.Child("nonResourceURLs"), rule.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
		}
		return errs
	}
	if len(rule.APIGroups) == 0 {
		errs = append(errs, field.Required(fldPath.Child("apiGroups"), "resource rules must supply at least one api group"))
	}
	if len(rule.Resources) == 0 {
		errs = append(errs, field.Required(fldPath.Child("resources"), "resource rules must supply at least one resource"))
	}
	return errs
}

func validateRules(rules []rbacv1.PolicyRule, namespaced bool) field.ErrorList {
	var errs field.ErrorList
	for i, r := range rules {
		errs = append(errs, ValidatePolicyRule(r, namespaced, field.NewPath("rules").Index(i))...)
	}
	return errs
}

// validateAggregationRule checks a cluster role's aggregationRule: at least
// one selector, each valid. allowInvalidLabelValues keeps accepting on
// update the selectors an older server let in.
func validateAggregationRule(rule *rbacv1.AggregationRule, allowInvalidLabelValues bool) field.ErrorList {
	if rule == nil {
		return nil
	}
	path := field.NewPath("aggregationRule", "clusterRoleSelectors")
	var errs field.ErrorList
	if len(rule.ClusterRoleSelectors) == 0 {
		errs = append(errs, field.Required(path, "at least one clusterRoleSelector required if aggregationRule is non-nil"))
	}
	opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: allowInvalidLabelValues}
	for i := range rule.ClusterRoleSelectors {
		sel := &rule.ClusterRoleSelectors[i]
		errs = append(errs, metav1validation.ValidateLabelSelector(sel, opts, path.Index(i))...)
		if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
			errs = append(errs, field.Invalid(path.Index(i), sel, "invalid label selector."))
		}
	}
	return errs
}

// hasInvalidLabelValues reports whether a stored aggregationRule has a
// selector that strict validation refuses.
func hasInvalidLabelValues(rule *rbacv1.AggregationRule) bool {
	if rule == nil {
		return false
	}
	for i := range rule.ClusterRoleSelectors {
		if len(metav1validation.ValidateLabelSelector(&rule.ClusterRoleSelectors[i], metav1validation.LabelSelectorValidationOptions{}, nil)) > 0 {
			return true
		}
	}
	return false
}

// validateRoleRef checks a binding's roleRef; kinds are the kinds it may
// refer to (a ClusterRoleBinding only to a ClusterRole).
func validateRoleRef(ref rbacv1.RoleRef, kinds ...string) field.ErrorList {
	path := field.NewPath("roleRef")
	var errs field.ErrorList
	if ref.APIGroup != rbacv1.GroupName {
		errs = append(errs, field.NotSupported(path.Child("apiGroup"), ref.APIGroup, []string{rbacv1.GroupName}))
	}
	supported := false
	for _, k := range kinds {
		supported = supported || ref.Kind == k
	}
	if !supported {
		errs = append(errs, field.NotSupported(path.Child("kind"), ref.Kind, kinds))
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	} else {
		for _, msg := range ValidateName(ref.Name, false) {
			errs = append(errs, field.Invalid(path.Child("name"), ref.Name, msg))
		}
	}
	return errs
}

// ValidateSubject checks one subject of a binding: a named User or Group of
// the RBAC API group, or a ServiceAccount of the core group, whose namespace
// a ClusterRoleBinding must give.
func ValidateSubject(s rbacv1.Subject, namespaced bool, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Name == "" {
		errs = append(errs, field.Required(fldPath.Child("name"), ""))
	}
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		if s.Name != "" {
			for _, msg := range apivalidation.NameIsDNSSubdomain(s.Name, false) {
				errs = append(errs, field.Invalid(fldPath.Child("name"), s.Name, msg))
			}
		}
		if s.APIGroup != "" {
			errs = append(errs, field.NotSupported(fldPath.Child("apiGroup"), s.APIGroup, []string{""}))
		}
		if !namespaced && s.Namespace == "" {
			errs = append(errs, field.Required(fldPath.Child("namespace"), ""))
		}
	case rbacv1.UserKind, rbacv1.GroupKind:
		if s.APIGroup != rbacv1.GroupName {
			errs = append(errs, field.NotSupported(fldPath.Child("apiGroup"), s.APIGroup, []string{rbacv1.GroupName}))
		}
	default:
		errs = append(errs, field.NotSupported(fldPath.Child("kind"), s.Kind,
			[]string{rbacv1.ServiceAccountKind, rbacv1.UserKind, rbacv1.GroupKind}))
	}
	return errs
}

func validateSubjects(subjects []rbacv1.Subject, namespaced bool) field.ErrorList {
	var errs field.ErrorList
	for i, s := range subjects {
		errs = append(errs, ValidateSubject(s, namespaced, field.NewPath("subjects").Index(i))...)
	}
	return errs
}

// validateRoleRefUnchanged: a binding's roleRef cannot change; delete and
// recreate the binding instead.
func validateRoleRefUnchanged(ref, old rbacv1.RoleRef) field.ErrorList {
	return apivalidation.ValidateImmutableField(ref, old, field.NewPath("roleRef"))
}
