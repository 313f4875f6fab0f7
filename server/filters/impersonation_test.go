package filters

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

func TestImpersonationRequested(t *testing.T) {
	tests := []struct {
		name    string
		headers map[string][]string
		want    *impersonation
		wantErr string
	}{
		{name: "none"},
		{name: "other headers", headers: map[string][]string{"Accept": {"application/json"}}},
		{name: "user", headers: map[string][]string{"Impersonate-User": {"jane"}}, want: &impersonation{name: "jane"}},
		{name: "everything", headers: map[string][]string{
			"Impersonate-User": {"jane"}, "Impersonate-Uid": {"u-1"}, "Impersonate-Group": {"a", "b"},
			"Impersonate-Extra-Scopes": {"x"}, "Impersonate-Extra-Example.com%2fteam": {"y"},
		}, want: &impersonation{name: "jane", uid: "u-1", groups: []string{"a", "b"},
			extra: map[string][]string{"scopes": {"x"}, "example.com/team": {"y"}}}},
		{name: "groups without a user", headers: map[string][]string{"Impersonate-Group": {"a"}},
			wantErr: `requested &user.DefaultInfo{Name:"", UID:"", Groups:[]string{"a"}, Extra:map[string][]string(nil)} without impersonating a user name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/api", nil)
			for k, vs := range tt.headers {
				for _, v := range vs {
					r.Header.Add(k, v)
				}
			}
			got, ok, err := impersonationRequested(r)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || ok != (tt.want != nil) {
				t.Fatalf("= %v, %v, %v; want %v", got, ok, err, tt.want)
			}
			if tt.want == nil {
				if got != nil {
					t.Errorf("= %+v without impersonation", got)
				}
				return
			}
			if got.name != tt.want.name || got.uid != tt.want.uid || !slices.Equal(got.groups, tt.want.groups) || len(got.extra) != len(tt.want.extra) {
				t.Fatalf("= %+v, want %+v", got, tt.want)
			}
			for k, v := range tt.want.extra {
				if !slices.Equal(got.extra[k], v) {
					t.Errorf("extra %q = %v, want %v", k, got.extra[k], v)
				}
			}
		})
	}
}
