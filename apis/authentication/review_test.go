package authentication

import (
	"context"
	"errors"
	"reflect"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/request"
)

func TestSelfSubjectReview(t *testing.T) {
	review := &authenticationv1.SelfSubjectReview{ObjectMeta: metav1.ObjectMeta{Name: "mine", Labels: map[string]string{"a": "b"}}}
	for _, tc := range []struct {
		name string
		user *authn.User
		want authenticationv1.UserInfo
	}{
		{"user with extra", &authn.User{Name: "alice", UID: "u-1", Groups: []string{"dev", "system:authenticated"},
			Extra: map[string][]string{"scopes": {"a", "b"}}},
			authenticationv1.UserInfo{Username: "alice", UID: "u-1", Groups: []string{"dev", "system:authenticated"},
				Extra: map[string]authenticationv1.ExtraValue{"scopes": {"a", "b"}}}},
		{"user without extra", &authn.User{Name: "system:anonymous", Groups: []string{"system:unauthenticated"}},
			authenticationv1.UserInfo{Username: "system:anonymous", Groups: []string{"system:unauthenticated"}}},
	} {
		obj, err := SelfSubjectReviewREST{}.Create(authn.WithUser(context.Background(), tc.user), review.DeepCopy(), nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := obj.(*authenticationv1.SelfSubjectReview)
		if !reflect.DeepEqual(got.Status.UserInfo, tc.want) {
			t.Errorf("%s: user %+v, want %+v", tc.name, got.Status.UserInfo, tc.want)
		}
		// A new review: nothing of the request's metadata, made now.
		if got.Name != "" || got.Labels != nil || got.CreationTimestamp.IsZero() {
			t.Errorf("%s: metadata %+v, want only a creation time", tc.name, got.ObjectMeta)
		}
	}

	if _, err := (SelfSubjectReviewREST{}).Create(context.Background(), review.DeepCopy(), nil, nil); !apierrors.IsInternalError(err) ||
		err.Error() != "Internal error occurred: the request has no authenticated user" {
		t.Errorf("without a user: %v", err)
	}
	ctx := authn.WithUser(context.Background(), &authn.User{Name: "alice"})
	if _, err := (SelfSubjectReviewREST{}).Create(ctx, &authenticationv1.TokenReview{}, nil, nil); !apierrors.IsBadRequest(err) {
		t.Errorf("a TokenReview posted as a SelfSubjectReview: %v", err)
	}
}

func TestTokenReviewRefusals(t *testing.T) {
	r := TokenReviewREST{}
	token := func(tok string) *authenticationv1.TokenReview {
		return &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: tok}}
	}
	refused := errors.New("admission says no")
	for _, tc := range []struct {
		name     string
		ctx      context.Context
		obj      runtime.Object
		validate func(context.Context, runtime.Object) error
		want     string
	}{
		{"another kind", context.Background(), &authenticationv1.SelfSubjectReview{}, nil, "not a TokenReview: *v1.SelfSubjectReview"},
		{"in a namespace", request.WithNamespace(context.Background(), "ns1"), token("t"), nil, "namespace is not allowed on this type: ns1"},
		{"no token", context.Background(), token(""), nil, "token is required for TokenReview in authentication"},
		{"admission refuses", context.Background(), token("t"), func(context.Context, runtime.Object) error { return refused }, refused.Error()},
	} {
		_, err := r.Create(tc.ctx, tc.obj, tc.validate, nil)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		if tc.validate == nil && !apierrors.IsBadRequest(err) {
			t.Errorf("%s: %v is not a BadRequest", tc.name, err)
		}
	}
}

func TestTokenReview(t *testing.T) {
	alice := &authn.User{Name: "alice", UID: "u-1", Groups: []string{"dev"}, Extra: map[string][]string{"scopes": {"a"}}}
	tokens := authn.StaticTokens(map[string]*authn.User{"alice-token": alice})
	// As the server builds it: tokens valid for the API's audiences.
	served := authn.WithAuthenticatedGroup(authn.NewBearerToken(authn.AudienceAgnostic([]string{"api"}, tokens), nil))
	aliceInfo := authenticationv1.UserInfo{Username: "alice", UID: "u-1", Groups: []string{"dev", "system:authenticated"},
		Extra: map[string]authenticationv1.ExtraValue{"scopes": {"a"}}}

	for _, tc := range []struct {
		name      string
		rest      TokenReviewREST
		token     string
		audiences []string
		want      authenticationv1.TokenReviewStatus
		wantErr   string
	}{
		{"no authenticator", TokenReviewREST{}, "alice-token", nil, authenticationv1.TokenReviewStatus{}, ""},
		{"the API's audiences", TokenReviewREST{Authenticator: served, APIAudiences: []string{"api"}}, "alice-token", nil,
			authenticationv1.TokenReviewStatus{Authenticated: true, User: aliceInfo, Audiences: []string{"api"}}, ""},
		{"audiences asked for, one the API's", TokenReviewREST{Authenticator: served, APIAudiences: []string{"api"}}, "alice-token", []string{"other", "api"},
			authenticationv1.TokenReviewStatus{Authenticated: true, User: aliceInfo, Audiences: []string{"api"}}, ""},
		{"audiences asked for, none the API's", TokenReviewREST{Authenticator: served, APIAudiences: []string{"api"}}, "alice-token", []string{"other"},
			authenticationv1.TokenReviewStatus{Error: "invalid bearer token"}, ""},
		{"unknown token", TokenReviewREST{Authenticator: served, APIAudiences: []string{"api"}}, "nobody", nil,
			authenticationv1.TokenReviewStatus{Error: "invalid bearer token"}, ""},
		{"no audiences anywhere", TokenReviewREST{Authenticator: authn.NewBearerToken(tokens, nil)}, "alice-token", nil,
			authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: "alice", UID: "u-1", Groups: []string{"dev"},
				Extra: map[string]authenticationv1.ExtraValue{"scopes": {"a"}}}}, ""},
		// An authenticator that answers for none of the audiences asked
		// for is the server's fault, as kube has it.
		{"authenticator ignoring audiences", TokenReviewREST{Authenticator: authn.NewBearerToken(tokens, nil), APIAudiences: []string{"api"}}, "alice-token", nil,
			authenticationv1.TokenReviewStatus{}, "Internal error occurred: error validating audiences"},
	} {
		in := &authenticationv1.TokenReview{ObjectMeta: metav1.ObjectMeta{Name: "r"},
			Spec:   authenticationv1.TokenReviewSpec{Token: tc.token, Audiences: tc.audiences},
			Status: authenticationv1.TokenReviewStatus{Authenticated: true, Error: "set by the client"}}
		obj, err := tc.rest.Create(context.Background(), in, nil, nil)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := obj.(*authenticationv1.TokenReview)
		if !reflect.DeepEqual(got.Status, tc.want) {
			t.Errorf("%s: status %+v, want %+v", tc.name, got.Status, tc.want)
		}
		if got.Name != "r" || got.Spec.Token != tc.token || !reflect.DeepEqual(got.Spec.Audiences, tc.audiences) {
			t.Errorf("%s: the review's request was not kept: %+v", tc.name, got)
		}
		if in.Status.Error != "set by the client" {
			t.Errorf("%s: the posted object was changed", tc.name)
		}
	}
}
