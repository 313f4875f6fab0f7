package authentication

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/request"
)

// TokenReviewREST answers a TokenReview: it authenticates spec.token with
// the server's bearer token authenticator for spec.audiences (the API's
// audiences when empty) and tells who the token's user is. Nothing is
// stored.
type TokenReviewREST struct {
	// Authenticator authenticates a request that carries only the token
	// in its Authorization header; nil authenticates nothing.
	Authenticator authn.Authenticator
	APIAudiences  []string
}

var _ rest.Creater = TokenReviewREST{}

// New returns an empty TokenReview.
func (TokenReviewREST) New() runtime.Object { return &authenticationv1.TokenReview{} }

// NamespaceScoped is false.
func (TokenReviewREST) NamespaceScoped() bool { return false }

// errBadAudiences is kube's answer when the authenticator's audiences do
// not match those asked for.
var errBadAudiences = apierrors.NewInternalError(errors.New("error validating audiences"))

// Create reviews the token.
func (r TokenReviewREST) Create(ctx context.Context, obj runtime.Object, validate rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	review, ok := obj.(*authenticationv1.TokenReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a TokenReview: %T", obj))
	}
	if ns := request.NamespaceFrom(ctx); ns != "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("namespace is not allowed on this type: %v", ns))
	}
	if review.Spec.Token == "" {
		return nil, apierrors.NewBadRequest("token is required for TokenReview in authentication")
	}
	if validate != nil {
		if err := validate(ctx, review.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	out := review.DeepCopy()
	out.Status = authenticationv1.TokenReviewStatus{}
	if r.Authenticator == nil {
		return out, nil
	}
	auds := out.Spec.Audiences
	if len(auds) == 0 {
		auds = r.APIAudiences
	}
	reqCtx := context.WithoutCancel(ctx)
	if len(auds) > 0 {
		reqCtx = authn.WithAudiences(reqCtx, slices.Clone(auds))
	}
	req, err := http.NewRequestWithContext(reqCtx, http.MethodGet, "/", nil)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	req.Header.Set("Authorization", "Bearer "+out.Spec.Token)
	resp, ok, err := r.Authenticator.AuthenticateRequest(req)
	out.Status.Authenticated = ok
	if err != nil {
		out.Status.Error = err.Error()
	}
	if len(auds) > 0 && resp != nil && len(authn.IntersectAudiences(auds, resp.Audiences)) == 0 {
		return nil, errBadAudiences
	}
	if resp != nil && resp.User != nil {
		u := resp.User
		out.Status.User = authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups}
		if len(u.Extra) > 0 {
			out.Status.User.Extra = map[string]authenticationv1.ExtraValue{}
			for k, v := range u.Extra {
				out.Status.User.Extra[k] = v
			}
		}
		out.Status.Audiences = resp.Audiences
	}
	return out, nil
}
