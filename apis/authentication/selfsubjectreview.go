// Package authentication serves authentication.k8s.io: reviews that tell a
// client who the server takes it to be.
package authentication

import (
	"context"
	"errors"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/registry/rest"
)

// SelfSubjectReviewREST answers a SelfSubjectReview with the requesting
// user's identity (kubectl auth whoami). Nothing is stored.
type SelfSubjectReviewREST struct{}

var _ rest.Creater = SelfSubjectReviewREST{}

// New returns an empty SelfSubjectReview.
func (SelfSubjectReviewREST) New() runtime.Object { return &authenticationv1.SelfSubjectReview{} }

// NamespaceScoped is false.
func (SelfSubjectReviewREST) NamespaceScoped() bool { return false }

// Create fills the review's status with the user of the request.
func (SelfSubjectReviewREST) Create(ctx context.Context, obj runtime.Object, _ rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	if _, ok := obj.(*authenticationv1.SelfSubjectReview); !ok {
		return nil, apierrors.NewBadRequest("not a SelfSubjectReview")
	}
	u, ok := authn.UserFrom(ctx)
	if !ok {
		return nil, apierrors.NewInternalError(errNoUser)
	}
	// kube answers a new review: nothing of the request's is kept.
	out := &authenticationv1.SelfSubjectReview{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.Now()}}
	out.Status.UserInfo = authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups}
	if len(u.Extra) > 0 {
		out.Status.UserInfo.Extra = map[string]authenticationv1.ExtraValue{}
		for k, v := range u.Extra {
			out.Status.UserInfo.Extra[k] = v
		}
	}
	return out, nil
}

var errNoUser = errors.New("the request has no authenticated user")
