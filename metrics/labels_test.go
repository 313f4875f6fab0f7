package metrics

import (
	"net/http/httptest"
	"testing"

	"github.com/capstan-io/capstan/request"
)

func TestResourceLabels(t *testing.T) {
	tests := []struct {
		method, target, contentType string
		want                        Labels
	}{
		{"GET", "/api/v1/namespaces/a/configmaps/x", "", Labels{Verb: "GET", Version: "v1", Resource: "configmaps", Scope: "resource", Component: "apiserver"}},
		{"GET", "/api/v1/namespaces/a/configmaps", "", Labels{Verb: "LIST", Version: "v1", Resource: "configmaps", Scope: "namespace", Component: "apiserver"}},
		{"GET", "/api/v1/configmaps?watch=true", "", Labels{Verb: "WATCH", Version: "v1", Resource: "configmaps", Scope: "cluster", Component: "apiserver"}},
		{"POST", "/apis/apps/v1/namespaces/a/deployments?dryRun=All", "", Labels{Verb: "POST", DryRun: "All", Group: "apps", Version: "v1", Resource: "deployments", Scope: "resource", Component: "apiserver"}},
		{"POST", "/api/v1/namespaces/a/pods?dryRun=Some", "", Labels{Verb: "POST", DryRun: "invalid", Version: "v1", Resource: "pods", Scope: "resource", Component: "apiserver"}},
		{"PATCH", "/api/v1/namespaces/a/pods/p", "application/apply-patch+yaml", Labels{Verb: "APPLY", Version: "v1", Resource: "pods", Scope: "resource", Component: "apiserver"}},
		{"PATCH", "/api/v1/namespaces/a/pods/p/status", "application/merge-patch+json", Labels{Verb: "PATCH", Version: "v1", Resource: "pods", Subresource: "status", Scope: "resource", Component: "apiserver"}},
		{"DELETE", "/api/v1/namespaces/a/pods", "", Labels{Verb: "DELETE", Version: "v1", Resource: "pods", Scope: "namespace", Component: "apiserver"}},
		{"GET", "/api/v1/namespaces/a/pods/p/log", "", Labels{Verb: "CONNECT", Version: "v1", Resource: "pods", Subresource: "log", Scope: "resource", Component: "apiserver"}},
		{"BREW", "/api/v1/namespaces/a/pods/p", "", Labels{Verb: "other", Version: "v1", Resource: "pods", Scope: "resource", Component: "apiserver"}},
	}
	parser := request.NewParser()
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, tt.target, nil)
		if tt.contentType != "" {
			r.Header.Set("Content-Type", tt.contentType)
		}
		info, err := parser.Parse(r)
		if err != nil {
			t.Fatalf("%s %s: %v", tt.method, tt.target, err)
		}
		if got := ResourceLabels(r, info); got != tt.want {
			t.Errorf("%s %s: labels\n  %+v, want\n  %+v", tt.method, tt.target, got, tt.want)
		}
	}
}

func TestCompressUsername(t *testing.T) {
	for name, want := range map[string]string{
		"admin": "admin", "kubelet": "kubelet", "jane@example.com": "email_id",
		"system:serviceaccount:kube-system:default": "system:serviceaccount:kube-system:default",
		"system:serviceaccount:ns:robot":            "other", "random-1234": "other",
	} {
		if got := compressUsername(name); got != want {
			t.Errorf("compressUsername(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestFieldValidationLabel(t *testing.T) {
	for query, want := range map[string]string{
		"": "", "fieldValidation=Strict": "Strict", "fieldValidation=strict": "invalid",
		"fieldValidation=Warn&fieldValidation=Ignore": "invalid",
	} {
		r := httptest.NewRequest("POST", "/api/v1/pods?"+query, nil)
		if got := fieldValidationLabel(r.URL); got != want {
			t.Errorf("%q: %q, want %q", query, got, want)
		}
	}
}
