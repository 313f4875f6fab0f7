package authorization

import (
	"context"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/request"
)

// recorder allows alice to get pods and remembers what it was asked.
type recorder struct{ asked authz.Attributes }

func (r *recorder) Authorize(_ context.Context, a authz.Attributes) (authz.Decision, string, error) {
	r.asked = a
	if a.User.Name == "alice" && a.Info.Resource == "pods" && a.Info.Verb == "get" {
		return authz.Allow, "ok", nil
	}
	return authz.NoOpinion, "", nil
}

func (r *recorder) RulesFor(context.Context, *authn.User, string) (authz.Rules, error) {
	return authz.Rules{Resource: []authorizationv1.ResourceRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}}}, nil
}

func getPods(ns string) *authorizationv1.ResourceAttributes {
	return &authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods", Namespace: ns}
}

func TestSubjectAccessReview(t *testing.T) {
	rec := &recorder{}
	rest := SubjectAccessReviewREST{Authorizer: rec}
	tests := []struct {
		name        string
		spec        authorizationv1.SubjectAccessReviewSpec
		meta        metav1.ObjectMeta
		wantAllowed bool
		wantErr     string
	}{
		{name: "allowed", spec: authorizationv1.SubjectAccessReviewSpec{User: "alice", ResourceAttributes: getPods("ns")}, wantAllowed: true},
		{name: "not allowed", spec: authorizationv1.SubjectAccessReviewSpec{User: "bob", ResourceAttributes: getPods("ns")}},
		{name: "no user nor group", spec: authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: getPods("ns")},
			wantErr: "spec.user: Invalid value: \"\": at least one of user or group must be specified"},
		{name: "both attributes", spec: authorizationv1.SubjectAccessReviewSpec{User: "a", ResourceAttributes: getPods(""),
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/", Verb: "get"}},
			wantErr: "exactly one of nonResourceAttributes or resourceAttributes must be specified"},
		{name: "metadata", meta: metav1.ObjectMeta{Name: "x"}, spec: authorizationv1.SubjectAccessReviewSpec{User: "a", ResourceAttributes: getPods("")},
			wantErr: "metadata: Invalid value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := rest.Create(context.Background(), &authorizationv1.SubjectAccessReview{ObjectMeta: tt.meta, Spec: tt.spec}, nil, nil)
			if tt.wantErr != "" {
				if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := out.(*authorizationv1.SubjectAccessReview).Status.Allowed; got != tt.wantAllowed {
				t.Errorf("allowed = %v", got)
			}
		})
	}
	if rec.asked.Info.APIVersion != "*" || !rec.asked.Info.IsResourceRequest {
		t.Errorf("asked %+v, want any version of a resource", rec.asked.Info)
	}
}

func TestSelfSubjectAccessReview(t *testing.T) {
	rec := &recorder{}
	ctx := authn.WithUser(context.Background(), &authn.User{Name: "alice"})
	out, err := SelfSubjectAccessReviewREST{Authorizer: rec}.Create(ctx,
		&authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: getPods("ns")}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := out.(*authorizationv1.SelfSubjectAccessReview).Status; !st.Allowed || st.Reason != "ok" {
		t.Errorf("status %+v", st)
	}
	_, err = SelfSubjectAccessReviewREST{Authorizer: rec}.Create(context.Background(),
		&authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: getPods("ns")}}, nil, nil)
	if !apierrors.IsBadRequest(err) {
		t.Errorf("no user: %v", err)
	}
}

func TestLocalSubjectAccessReview(t *testing.T) {
	rest := LocalSubjectAccessReviewREST{Authorizer: &recorder{}}
	ctx := request.WithNamespace(context.Background(), "ns")
	review := func(objNS, attrNS string) runtime.Object {
		return &authorizationv1.LocalSubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Namespace: objNS},
			Spec: authorizationv1.SubjectAccessReviewSpec{User: "alice", ResourceAttributes: getPods(attrNS)}}
	}
	out, err := rest.Create(ctx, review("", "ns"), nil, nil)
	if err != nil || !out.(*authorizationv1.LocalSubjectAccessReview).Status.Allowed {
		t.Fatalf("got %v %v", out, err)
	}
	if _, err := rest.Create(ctx, review("ns", "other"), nil, nil); !apierrors.IsInvalid(err) ||
		!strings.Contains(err.Error(), "spec.resourceAttributes.namespace: Invalid value: \"other\": must match metadata.namespace") {
		t.Errorf("namespace mismatch: %v", err)
	}
	if _, err := rest.Create(ctx, review("other", "other"), nil, nil); !apierrors.IsBadRequest(err) {
		t.Errorf("object in another namespace: %v", err)
	}
}

func TestSelfSubjectRulesReview(t *testing.T) {
	ctx := authn.WithUser(context.Background(), &authn.User{Name: "alice"})
	rest := SelfSubjectRulesReviewREST{Authorizer: &recorder{}}
	out, err := rest.Create(ctx, &authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: "ns"}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := out.(*authorizationv1.SelfSubjectRulesReview).Status
	if len(st.ResourceRules) != 1 || st.NonResourceRules == nil || st.Incomplete {
		t.Errorf("status %+v", st)
	}
	if _, err := rest.Create(ctx, &authorizationv1.SelfSubjectRulesReview{}, nil, nil); !apierrors.IsBadRequest(err) {
		t.Errorf("no namespace: %v", err)
	}
}

func TestEvaluationError(t *testing.T) {
	res := &authorizationv1.ResourceAttributes{
		LabelSelector: &authorizationv1.LabelSelectorAttributes{RawSelector: "a in (("},
		FieldSelector: &authorizationv1.FieldSelectorAttributes{Requirements: []metav1.FieldSelectorRequirement{
			{Key: "a", Operator: metav1.FieldSelectorOpIn, Values: []string{"x"}}, {Key: "b", Operator: metav1.FieldSelectorOpExists}}},
	}
	want := "spec.resourceAttributes.fieldSelector partially ignored due to parse error; spec.resourceAttributes.labelSelector ignored due to parse error"
	if got := evaluationError(nil, res); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
