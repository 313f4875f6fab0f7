package authorization

import (
	"errors"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/request"
)

// attributesOf is what the authorizer is asked for a review: the resource
// request (any version, when none is given) or the non-resource one.
func attributesOf(u *authn.User, res *authorizationv1.ResourceAttributes, nonRes *authorizationv1.NonResourceAttributes) authz.Attributes {
	if res == nil {
		return authz.Attributes{User: u, Info: &request.Info{Path: nonRes.Path, Verb: nonRes.Verb}}
	}
	version := res.Version
	if version == "" {
		version = "*"
	}
	return authz.Attributes{User: u, Info: &request.Info{
		IsResourceRequest: true, Verb: res.Verb, APIGroup: res.Group, APIVersion: version,
		Namespace: res.Namespace, Resource: res.Resource, Subresource: res.Subresource, Name: res.Name,
		FieldSelector: rawFieldSelector(res.FieldSelector),
	}}
}

// rawFieldSelector writes a review's field selector as a request's query
// would carry it; requirements it cannot say that way are left out, so they
// can only narrow what is allowed less, never widen it.
func rawFieldSelector(s *authorizationv1.FieldSelectorAttributes) string {
	if s == nil {
		return ""
	}
	if s.RawSelector != "" {
		return s.RawSelector
	}
	var terms []string
	for _, r := range s.Requirements {
		if len(r.Values) != 1 {
			continue
		}
		switch r.Operator {
		case metav1.FieldSelectorOpIn:
			terms = append(terms, r.Key+"="+fields.EscapeValue(r.Values[0]))
		case metav1.FieldSelectorOpNotIn:
			terms = append(terms, r.Key+"!="+fields.EscapeValue(r.Values[0]))
		}
	}
	return strings.Join(terms, ",")
}

// userOf is the user a SubjectAccessReview asks about.
func userOf(spec *authorizationv1.SubjectAccessReviewSpec) *authn.User {
	u := &authn.User{Name: spec.User, UID: spec.UID, Groups: spec.Groups}
	if spec.Extra != nil {
		u.Extra = map[string][]string{}
		for k, v := range spec.Extra {
			u.Extra[k] = v
		}
	}
	return u
}

// statusOf is the review's answer.
func statusOf(d authz.Decision, reason string, err error, res *authorizationv1.ResourceAttributes) authorizationv1.SubjectAccessReviewStatus {
	return authorizationv1.SubjectAccessReviewStatus{
		Allowed: d == authz.Allow, Denied: d == authz.Deny, Reason: reason,
		EvaluationError: evaluationError(err, res),
	}
}

// evaluationError joins the authorizer's error and, as kube does, a note
// for each selector the authorizer could only partly understand. Capstan's
// authorizers do not look at selectors, but clients read these notes.
func evaluationError(err error, res *authorizationv1.ResourceAttributes) string {
	var out []string
	if err != nil {
		out = append(out, err.Error())
	}
	if res != nil && res.FieldSelector != nil {
		if note := selectorNote(fieldSelectorParse(res.FieldSelector)); note != "" {
			out = append(out, "spec.resourceAttributes.fieldSelector "+note)
		}
	}
	if res != nil && res.LabelSelector != nil {
		if note := selectorNote(labelSelectorParse(res.LabelSelector)); note != "" {
			out = append(out, "spec.resourceAttributes.labelSelector "+note)
		}
	}
	return strings.Join(out, "; ")
}

func selectorNote(valid int, err error) string {
	switch {
	case err == nil:
		return ""
	case valid > 0:
		return "partially ignored due to parse error"
	}
	return "ignored due to parse error"
}

// labelSelectorParse counts the requirements of a selector the server
// understands, and reports the first it does not.
func labelSelectorParse(s *authorizationv1.LabelSelectorAttributes) (int, error) {
	if s.RawSelector != "" {
		sel, err := labels.Parse(s.RawSelector)
		if err != nil {
			return 0, err
		}
		reqs, _ := sel.Requirements()
		return len(reqs), nil
	}
	var (
		valid int
		errs  []error
	)
	ops := map[metav1.LabelSelectorOperator]selection.Operator{
		metav1.LabelSelectorOpIn: selection.In, metav1.LabelSelectorOpNotIn: selection.NotIn,
		metav1.LabelSelectorOpExists: selection.Exists, metav1.LabelSelectorOpDoesNotExist: selection.DoesNotExist,
	}
	for _, r := range s.Requirements {
		op, ok := ops[r.Operator]
		if !ok {
			errs = append(errs, errors.New("unknown operator"))
			continue
		}
		values := r.Values
		if len(values) == 0 {
			values = nil
		}
		if _, err := labels.NewRequirement(r.Key, op, values); err != nil {
			errs = append(errs, err)
			continue
		}
		valid++
	}
	return valid, errors.Join(errs...)
}

// fieldSelectorParse is labelSelectorParse for field selectors, which take
// In and NotIn of one value only.
func fieldSelectorParse(s *authorizationv1.FieldSelectorAttributes) (int, error) {
	if s.RawSelector != "" {
		sel, err := fields.ParseSelector(s.RawSelector)
		if err != nil {
			return 0, err
		}
		return len(sel.Requirements()), nil
	}
	var (
		valid int
		errs  []error
	)
	for _, r := range s.Requirements {
		if len(r.Values) != 1 || (r.Operator != metav1.FieldSelectorOpIn && r.Operator != metav1.FieldSelectorOpNotIn) {
			errs = append(errs, errors.New("unsupported field selector requirement"))
			continue
		}
		valid++
	}
	return valid, errors.Join(errs...)
}
