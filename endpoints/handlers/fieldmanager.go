package handlers

import (
	"net/http"
	"strings"
	"unicode"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxManagerLength bounds a field manager's name, as kube does.
const maxManagerLength = 128

// managerName is the field manager a write is recorded under: the
// fieldManager parameter, or the client's user agent up to its first "/".
func managerName(fieldManager string, r *http.Request) string {
	if fieldManager != "" {
		return fieldManager
	}
	ua := r.UserAgent()
	if i := strings.Index(ua, "/"); i >= 0 {
		ua = ua[:i]
	}
	if len(ua) > maxManagerLength {
		ua = ua[:maxManagerLength]
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, ua)
}

// trackUpdate records a non-apply write of obj over live in obj's managed
// fields. live is an empty object for a create.
func (s *Scope) trackUpdate(live, obj runtime.Object, manager string) runtime.Object {
	fm := s.UpdateFieldManager
	if fm == nil {
		fm = s.FieldManager
	}
	if fm == nil {
		return obj
	}
	if live == nil {
		live = s.Storage.New()
	}
	return fm.UpdateNoErrors(live, obj, manager)
}

// optionsInvalid is kube's 422 for invalid write options.
func optionsInvalid(kind string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: kind}, "", errs)
}

func validateCreateOptions(o *metav1.CreateOptions) error {
	return optionsInvalid("CreateOptions", metav1validation.ValidateCreateOptions(o))
}

func validateUpdateOptions(o *metav1.UpdateOptions) error {
	return optionsInvalid("UpdateOptions", metav1validation.ValidateUpdateOptions(o))
}

func validatePatchOptions(o *metav1.PatchOptions, pt types.PatchType) error {
	return optionsInvalid("PatchOptions", metav1validation.ValidatePatchOptions(o, pt))
}

func validateDeleteOptions(o *metav1.DeleteOptions) error {
	return optionsInvalid("DeleteOptions", metav1validation.ValidateDeleteOptions(o))
}
