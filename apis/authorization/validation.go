package authorization

import (
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const exactlyOne = "exactly one of nonResourceAttributes or resourceAttributes must be specified"

// validateAttributes: exactly one of resource and non-resource attributes,
// and well-formed selectors.
func validateAttributes(res *authorizationv1.ResourceAttributes, nonRes *authorizationv1.NonResourceAttributes, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if (res == nil) == (nonRes == nil) {
		errs = append(errs, field.Invalid(fldPath, nonRes, exactlyOne))
	}
	if res == nil {
		return errs
	}
	path := field.NewPath("spec.resourceAttributes")
	errs = append(errs, validateFieldSelector(res.FieldSelector, path.Child("fieldSelector"))...)
	return append(errs, validateLabelSelector(res.LabelSelector, path.Child("labelSelector"))...)
}

// validateSpec checks a SubjectAccessReview's spec: it needs a user or a
// group to check.
func validateSpec(spec *authorizationv1.SubjectAccessReviewSpec) field.ErrorList {
	fldPath := field.NewPath("spec")
	errs := validateAttributes(spec.ResourceAttributes, spec.NonResourceAttributes, fldPath)
	if spec.User == "" && len(spec.Groups) == 0 {
		errs = append(errs, field.Invalid(fldPath.Child("user"), spec.User, "at least one of user or group must be specified"))
	}
	return errs
}

// validateEmptyMeta: reviews are not objects; their metadata must be empty
// (managed fields aside, which apply may set).
func validateEmptyMeta(m metav1.ObjectMeta, allowNamespace bool) field.ErrorList {
	rest := m
	rest.ManagedFields = nil
	msg := "must be empty"
	if allowNamespace {
		rest.Namespace = ""
		msg = "must be empty except for namespace"
	}
	if !equality.Semantic.DeepEqual(metav1.ObjectMeta{}, rest) {
		return field.ErrorList{field.Invalid(field.NewPath("metadata"), m, msg)}
	}
	return nil
}

func validateFieldSelector(s *authorizationv1.FieldSelectorAttributes, fldPath *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	errs := validateSelectorForm(s.RawSelector, len(s.Requirements), fldPath)
	opts := metav1validation.FieldSelectorValidationOptions{AllowUnknownOperatorInRequirement: true}
	for i, r := range s.Requirements {
		errs = append(errs, metav1validation.ValidateFieldSelectorRequirement(r, opts, fldPath.Child("requirements").Index(i))...)
	}
	return errs
}

func validateLabelSelector(s *authorizationv1.LabelSelectorAttributes, fldPath *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	errs := validateSelectorForm(s.RawSelector, len(s.Requirements), fldPath)
	opts := metav1validation.LabelSelectorValidationOptions{AllowUnknownOperatorInRequirement: true}
	for i, r := range s.Requirements {
		errs = append(errs, metav1validation.ValidateLabelSelectorRequirement(r, opts, fldPath.Child("requirements").Index(i))...)
	}
	return errs
}

// validateSelectorForm: a selector is raw or requirements, not both nor none.
func validateSelectorForm(raw string, requirements int, fldPath *field.Path) field.ErrorList {
	switch {
	case raw != "" && requirements > 0:
		return field.ErrorList{field.Invalid(fldPath.Child("rawSelector"), raw, "may not specified at the same time as requirements")}
	case raw == "" && requirements == 0:
		return field.ErrorList{field.Required(fldPath.Child("requirements"),
			fmt.Sprintf("when %s is specified, requirements or rawSelector is required", fldPath))}
	}
	return nil
}
