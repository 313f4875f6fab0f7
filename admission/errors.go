package admission

import (
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NewForbidden is kube's refusal of a write by a plugin: 403 Forbidden on
// the object's resource and name (its generateName before the name is made,
// "Unknown" without either). An err that is a Forbidden already stands.
func NewForbidden(a *Attributes, err error) error {
	if apierrors.IsForbidden(err) {
		return err
	}
	name := a.Name
	if name == "" {
		name = "Unknown"
		if a.Object != nil {
			if m, merr := meta.Accessor(a.Object); merr != nil {
				name = "Unknown/errorGettingName"
			} else if m.GetName() != "" {
				name = m.GetName()
			} else if m.GetGenerateName() != "" {
				name = m.GetGenerateName()
			}
		}
	}
	return apierrors.NewForbidden(a.Resource.GroupResource(), name, err)
}

// asStatus is how kube answers a plugin's error: an API error as it is;
// any other error (kube's AlwaysPullImages aggregate, PodTolerationRestriction's
// whitelist conflict, a namespace annotation that does not parse...) as
// kube's handler writes an error that is not a Status: a 500 with no
// reason and the error's own message. Plugins return such errors plainly,
// as kube's do, and the chain gives them kube's answer.
func asStatus(err error) error {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return err
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Reason: metav1.StatusReasonUnknown, Message: err.Error(),
	}}
}
