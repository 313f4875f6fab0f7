package webhook

import (
	"context"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
)

func TestMatchConditions(t *testing.T) {
	res := authorizationv1.SubjectAccessReviewSpec{User: "alice", Groups: []string{"dev"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "ns", Verb: "get", Resource: "pods"}}
	nonRes := authorizationv1.SubjectAccessReviewSpec{User: "alice", NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/healthz", Verb: "get"}}
	for _, tc := range []struct {
		exprs      []string
		spec       authorizationv1.SubjectAccessReviewSpec
		want       bool
		compileErr string
		evalErr    string
	}{
		{exprs: nil, spec: res, want: true},
		{exprs: []string{"has(request.resourceAttributes)"}, spec: res, want: true},
		{exprs: []string{"has(request.resourceAttributes)"}, spec: nonRes, want: false},
		{exprs: []string{"'dev' in request.groups", "request.resourceAttributes.namespace == 'ns'"}, spec: res, want: true},
		{exprs: []string{"request.user == 'bob'", "request.resourceAttributes.namespace == 'ns'"}, spec: res, want: false},
		// A false condition wins over an error in another.
		{exprs: []string{"request.resourceAttributes.namespace == 'x'", "request.user == 'bob'"}, spec: nonRes, want: false},
		{exprs: []string{"request.resourceAttributes.namespace == 'ns'"}, spec: nonRes, evalErr: "cel evaluation error"},
		{exprs: []string{"request.nope == 'x'"}, compileErr: "undefined field 'nope'"},
		{exprs: []string{"request.user"}, compileErr: "must evaluate to bool"},
		{exprs: []string{""}, compileErr: "Required value"},
		{exprs: []string{"true", "true"}, compileErr: "Duplicate value"},
	} {
		m, err := CompileMatchConditions(tc.exprs)
		if tc.compileErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.compileErr) {
				t.Errorf("%v: compile error %v, want %q", tc.exprs, err, tc.compileErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", tc.exprs, err)
		}
		got, err := m.Matches(context.Background(), tc.spec)
		if tc.evalErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.evalErr) {
				t.Errorf("%v: eval error %v, want %q", tc.exprs, err, tc.evalErr)
			}
			continue
		}
		if got != tc.want || err != nil {
			t.Errorf("%v: %v %v, want %v", tc.exprs, got, err, tc.want)
		}
	}
}
