package authn

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

func fixed(name string, groups ...string) Authenticator {
	return AuthenticatorFunc(func(*http.Request) (*Response, bool, error) {
		return &Response{User: &User{Name: name, Groups: groups}}, true, nil
	})
}

func failing(msg string) Authenticator {
	return AuthenticatorFunc(func(*http.Request) (*Response, bool, error) {
		return nil, false, errors.New(msg)
	})
}

var noOpinion = AuthenticatorFunc(func(*http.Request) (*Response, bool, error) { return nil, false, nil })

func TestUnion(t *testing.T) {
	tests := []struct {
		name       string
		auth       Authenticator
		wantOK     bool
		wantUser   string
		wantGroups []string
		wantErr    string
	}{
		{name: "first success wins", auth: Union(noOpinion, fixed("a", "g"), fixed("b")),
			wantOK: true, wantUser: "a", wantGroups: []string{"g", AllAuthenticated}},
		{name: "errors before a success are dropped", auth: Union(failing("bad token"), fixed("a")),
			wantOK: true, wantUser: "a", wantGroups: []string{AllAuthenticated}},
		{name: "errors aggregated when nobody succeeds", auth: Union(failing("e1"), noOpinion, failing("e2")),
			wantErr: "[e1, e2]"},
		{name: "nobody has an opinion", auth: Union(noOpinion, noOpinion)},
		{name: "empty union", auth: Union()},
		{name: "union of one adds the group", auth: Union(fixed("a")),
			wantOK: true, wantUser: "a", wantGroups: []string{AllAuthenticated}},
		{name: "anonymous gets no authenticated group", auth: Union(NewAnonymous()),
			wantOK: true, wantUser: Anonymous, wantGroups: []string{AllUnauthenticated}},
		{name: "group already present", auth: Union(fixed("a", AllAuthenticated, "x")),
			wantOK: true, wantUser: "a", wantGroups: []string{AllAuthenticated, "x"}},
		{name: "unauthenticated group keeps its groups", auth: Union(fixed("a", AllUnauthenticated)),
			wantOK: true, wantUser: "a", wantGroups: []string{AllUnauthenticated}},
		{name: "fail on error stops at the first error", auth: UnionFailOnError(failing("bad cert"), NewAnonymous()),
			wantErr: "bad cert"},
		{name: "fail on error falls through no opinion", auth: UnionFailOnError(Union(noOpinion), NewAnonymous()),
			wantOK: true, wantUser: Anonymous, wantGroups: []string{AllUnauthenticated}},
		{name: "kube composition with a valid user", auth: UnionFailOnError(Union(failing("x"), fixed("a")), NewAnonymous()),
			wantOK: true, wantUser: "a", wantGroups: []string{AllAuthenticated}},
		{name: "success without a user", auth: Union(AuthenticatorFunc(func(*http.Request) (*Response, bool, error) { return &Response{}, true, nil })),
			wantErr: "without a user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, ok, err := tt.auth.AuthenticateRequest(httptest.NewRequest("GET", "/", nil))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || ok {
					t.Fatalf("= %v, %v; want error %q", ok, err, tt.wantErr)
				}
				return
			}
			if err != nil || ok != tt.wantOK {
				t.Fatalf("= %v, %v; want %v, nil", ok, err, tt.wantOK)
			}
			if !ok {
				if resp != nil {
					t.Errorf("response %v without ok", resp)
				}
				return
			}
			if resp.User.Name != tt.wantUser || !slices.Equal(resp.User.Groups, tt.wantGroups) {
				t.Errorf("user = %+v, want %s %v", resp.User, tt.wantUser, tt.wantGroups)
			}
		})
	}
}

func TestUnionDoesNotModifyTheUser(t *testing.T) {
	u := &User{Name: "a", Groups: make([]string, 1, 4)}
	u.Groups[0] = "g"
	src := AuthenticatorFunc(func(*http.Request) (*Response, bool, error) { return &Response{User: u}, true, nil })
	resp, _, _ := Union(src).AuthenticateRequest(httptest.NewRequest("GET", "/", nil))
	if resp.User == u || !slices.Equal(u.Groups, []string{"g"}) || !slices.Equal(u.Groups[:2], []string{"g", ""}) {
		t.Errorf("the authenticator's user was changed: %+v", u)
	}
}

func TestUnionOfOneIsThatOne(t *testing.T) {
	calls := 0
	a := AuthenticatorFunc(func(*http.Request) (*Response, bool, error) { calls++; return nil, false, errors.New("x") })
	_, _, err := UnionFailOnError(a).AuthenticateRequest(httptest.NewRequest("GET", "/", nil))
	if calls != 1 || err == nil || err.Error() != "x" {
		t.Errorf("calls=%d err=%v: want the one authenticator's own error", calls, err)
	}
}
