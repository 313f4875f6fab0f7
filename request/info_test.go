package request

import (
	"net/http/httptest"
	"reflect"
	"testing"
)

// TestParse holds the cases kube-apiserver v1.37.2 derives request info for:
// what RBAC, audit, APF and metrics see of a request.
func TestParse(t *testing.T) {
	type want struct {
		verb, prefix, group, version, ns, resource, sub, name string
		parts                                                 []string
	}
	tests := []struct {
		method, target string
		want           want
	}{
		// Collections and objects of the core group.
		{"GET", "/api/v1/namespaces", want{"list", "api", "", "v1", "", "namespaces", "", "", []string{"namespaces"}}},
		{"GET", "/api/v1/namespaces/other", want{"get", "api", "", "v1", "other", "namespaces", "", "other", []string{"namespaces", "other"}}},
		{"GET", "/api/v1/namespaces/other/pods", want{"list", "api", "", "v1", "other", "pods", "", "", []string{"pods"}}},
		{"GET", "/api/v1/namespaces/other/pods/foo", want{"get", "api", "", "v1", "other", "pods", "", "foo", []string{"pods", "foo"}}},
		{"HEAD", "/api/v1/namespaces/other/pods/foo", want{"get", "api", "", "v1", "other", "pods", "", "foo", []string{"pods", "foo"}}},
		{"HEAD", "/api/v1/pods", want{"list", "api", "", "v1", "", "pods", "", "", []string{"pods"}}},
		{"GET", "/api/v1/pods/", want{"list", "api", "", "v1", "", "pods", "", "", []string{"pods"}}},
		// Path verbs: legacy watch paths and the proxy paths, whose rest is
		// no subresource.
		{"GET", "/api/v1/watch/pods", want{"watch", "api", "", "v1", "", "pods", "", "", []string{"pods"}}},
		{"GET", "/api/v1/watch/namespaces/other/pods/foo", want{"watch", "api", "", "v1", "other", "pods", "", "foo", []string{"pods", "foo"}}},
		{"GET", "/api/v1/proxy/namespaces/other/pods/foo", want{"proxy", "api", "", "v1", "other", "pods", "", "foo", []string{"pods", "foo"}}},
		{"GET", "/api/v1/proxy/namespaces/other/pods/foo/a/b", want{"proxy", "api", "", "v1", "other", "pods", "", "foo", []string{"pods", "foo", "a", "b"}}},
		// The watch parameter: any value but 0 and false, even an empty one.
		{"GET", "/api/v1/pods?watch=true", want{"watch", "api", "", "v1", "", "pods", "", "", []string{"pods"}}},
		{"GET", "/api/v1/pods?watch=1", want{"watch", "api", "", "v1", "", "pods", "", "", []string{"pods"}}},
		{"GET", "/api/v1/pods?watch=yes", want{"watch", "api", "", "v1", "", "pods", "", "", []string{"pods"}}},
		{"GET", "/api/v1/pods?watch=", want{"watch", "api", "", "v1", "", "pods", "", "", []string{"pods"}}},
		{"GET", "/api/v1/pods?watch=FALSE", want{"list", "api", "", "v1", "", "pods", "", "", []string{"pods"}}},
		{"GET", "/api/v1/pods?watch=0", want{"list", "api", "", "v1", "", "pods", "", "", []string{"pods"}}},
		// Options that do not decode leave the watch flag alone.
		{"GET", "/api/v1/pods?watch=true&limit=x", want{"watch", "api", "", "v1", "", "pods", "", "", []string{"pods"}}},
		{"GET", "/api/v1/pods?watch=false&limit=x", want{"list", "api", "", "v1", "", "pods", "", "", []string{"pods"}}},
		// A named object is a get, watch parameter or not.
		{"GET", "/api/v1/namespaces/other/pods/foo?watch=true", want{"get", "api", "", "v1", "other", "pods", "", "foo", []string{"pods", "foo"}}},
		// Subresources; a namespace's own status and finalize.
		{"GET", "/api/v1/namespaces/other/pods/foo/status", want{"get", "api", "", "v1", "other", "pods", "status", "foo", []string{"pods", "foo", "status"}}},
		{"GET", "/api/v1/namespaces/other/pods/foo/proxy/a/b", want{"get", "api", "", "v1", "other", "pods", "proxy", "foo", []string{"pods", "foo", "proxy", "a", "b"}}},
		{"PUT", "/api/v1/namespaces/other/finalize", want{"update", "api", "", "v1", "other", "namespaces", "finalize", "other", []string{"namespaces", "other", "finalize"}}},
		{"PUT", "/api/v1/namespaces/other/status", want{"update", "api", "", "v1", "other", "namespaces", "status", "other", []string{"namespaces", "other", "status"}}},
		{"POST", "/api/v1/namespaces/other/pods/foo/eviction", want{"create", "api", "", "v1", "other", "pods", "eviction", "foo", []string{"pods", "foo", "eviction"}}},
		// Writes.
		{"PATCH", "/api/v1/namespaces/other/pods/foo", want{"patch", "api", "", "v1", "other", "pods", "", "foo", []string{"pods", "foo"}}},
		{"DELETE", "/api/v1/namespaces/other/pods/foo", want{"delete", "api", "", "v1", "other", "pods", "", "foo", []string{"pods", "foo"}}},
		{"POST", "/api/v1/namespaces/other/pods", want{"create", "api", "", "v1", "other", "pods", "", "", []string{"pods"}}},
		{"DELETE", "/api/v1/nodes", want{"deletecollection", "api", "", "v1", "", "nodes", "", "", []string{"nodes"}}},
		{"DELETE", "/api/v1/namespaces", want{"deletecollection", "api", "", "v1", "", "namespaces", "", "", []string{"namespaces"}}},
		// Named groups.
		{"DELETE", "/apis/apps/v1/namespaces/other/deployments", want{"deletecollection", "apis", "apps", "v1", "other", "deployments", "", "", []string{"deployments"}}},
		{"PUT", "/apis/apps/v1/namespaces/other/deployments/d/scale", want{"update", "apis", "apps", "v1", "other", "deployments", "scale", "d", []string{"deployments", "d", "scale"}}},
		{"POST", "/apis/example.com/v1beta3/things", want{"create", "apis", "example.com", "v1beta3", "", "things", "", "", []string{"things"}}},
		// A method with no verb.
		{"OPTIONS", "/api/v1/pods", want{"", "api", "", "v1", "", "pods", "", "", []string{"pods"}}},
		// An unknown path segment stays the resource: the router answers it.
		{"GET", "/api/v1/namespaces/other/pods/foo/status/extra", want{"get", "api", "", "v1", "other", "pods", "status", "foo", []string{"pods", "foo", "status", "extra"}}},
	}
	p := NewParser()
	for _, tt := range tests {
		info, err := p.Parse(httptest.NewRequest(tt.method, tt.target, nil))
		if err != nil {
			t.Errorf("%s %s: %v", tt.method, tt.target, err)
			continue
		}
		got := want{info.Verb, info.APIPrefix, info.APIGroup, info.APIVersion, info.Namespace, info.Resource, info.Subresource, info.Name, info.Parts}
		if !info.IsResourceRequest || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s %s (resource request %v):\n got %+v\nwant %+v", tt.method, tt.target, info.IsResourceRequest, got, tt.want)
		}
	}
}

// TestParseNonResource: discovery, health and unknown roots are not
// resource requests; their verb is the lower-case method.
func TestParseNonResource(t *testing.T) {
	for _, target := range []string{
		"/", "/api", "/api/v1", "/api/v1/", "/apis", "/apis/apps", "/apis/apps/v1", "/apis/apps/v1/",
		"/healthz", "/version", "/openapi/v3/apis/apps/v1", "/not-api/v1/pods", "/apis/v1/pods",
	} {
		info, err := NewParser().Parse(httptest.NewRequest("PUT", target, nil))
		if err != nil || info.IsResourceRequest || info.Verb != "put" || info.Path != target {
			t.Errorf("%s: %+v, %v; want a non-resource put", target, info, err)
		}
	}
}

// TestParseRefused: a path verb with nothing after it is an error (kube's
// 500), not a request about nothing.
func TestParseRefused(t *testing.T) {
	for _, target := range []string{"/api/v1/watch", "/api/v1/watch/", "/apis/apps/v1/proxy"} {
		if info, err := NewParser().Parse(httptest.NewRequest("GET", target, nil)); err == nil {
			t.Errorf("%s: %+v, want an error", target, info)
		}
	}
}

// TestParseSelectors: a list's or watch's metadata.name field selector
// names the object (RBAC resourceNames need it), when the selector parses
// and the name could be a path segment; the raw selectors are kept for
// collection verbs reached by method only.
func TestParseSelectors(t *testing.T) {
	tests := []struct {
		method, target              string
		verb, name, field, labelSel string
	}{
		{"GET", "/apis/g/v/things", "list", "", "", ""},
		{"GET", "/apis/g/v/things?fieldSelector=metadata.name=n1", "list", "n1", "metadata.name=n1", ""},
		{"GET", "/apis/g/v/things?fieldSelector=metadata.name==n1", "list", "n1", "metadata.name==n1", ""},
		{"GET", "/apis/g/v/things?fieldSelector=metadata.name!=n1", "list", "", "metadata.name!=n1", ""},
		{"GET", "/apis/g/v/things?fieldSelector=spec.x=1,metadata.name=n1", "list", "n1", "spec.x=1,metadata.name=n1", ""},
		{"GET", "/apis/g/v/things?watch=true&fieldSelector=metadata.name=n1", "watch", "n1", "metadata.name=n1", ""},
		{"GET", "/apis/g/v/namespaces/ns/things?watch=1&fieldSelector=metadata.name%3Dn1", "watch", "n1", "metadata.name=n1", ""},
		{"GET", "/apis/g/v/things?fieldSelector=foo=bar&labelSelector=baz=qux", "list", "", "foo=bar", "baz=qux"},
		// A selector that does not parse names nothing.
		{"GET", "/apis/g/v/things?fieldSelector=metadata.name=n1,foo", "list", "", "metadata.name=n1,foo", ""},
		{"GET", "/apis/g/v/things?fieldSelector=metadata.name=n1,foo&watch=true", "watch", "", "metadata.name=n1,foo", ""},
		{"GET", "/apis/g/v/things?fieldSelector=metadata.name=n1&labelSelector=a%20in", "list", "", "metadata.name=n1", "a in"},
		// Names that cannot be path segments are not taken.
		{"GET", "/apis/g/v/things?fieldSelector=metadata.name=..", "list", "", "metadata.name=..", ""},
		{"GET", "/apis/g/v/things?fieldSelector=metadata.name=a%2Fb", "list", "", "metadata.name=a/b", ""},
		{"GET", "/apis/g/v/things?fieldSelector=metadata.name=a%25b", "list", "", "metadata.name=a%b", ""},
		// The first of repeated parameters counts.
		{"GET", "/apis/g/v/things?fieldSelector=metadata.name=foo&fieldSelector=metadata.name=bar&labelSelector=a=b&labelSelector=a=c", "list", "foo", "metadata.name=foo", "a=b"},
		{"DELETE", "/apis/g/v/things?fieldSelector=foo=bar&labelSelector=baz=qux", "deletecollection", "", "foo=bar", "baz=qux"},
		// Not for other verbs, nor for the legacy watch paths.
		{"GET", "/apis/g/v/things/n?fieldSelector=foo=bar&labelSelector=a=b", "get", "n", "", ""},
		{"GET", "/apis/g/v/watch/things?fieldSelector=metadata.name=foo&labelSelector=a=b", "watch", "", "", ""},
		{"GET", "/apis/g/v/watch/things/n?fieldSelector=metadata.name=foo&labelSelector=a=b", "watch", "n", "", ""},
	}
	for _, tt := range tests {
		info, err := NewParser().Parse(httptest.NewRequest(tt.method, tt.target, nil))
		if err != nil {
			t.Errorf("%s %s: %v", tt.method, tt.target, err)
			continue
		}
		got := [4]string{info.Verb, info.Name, info.FieldSelector, info.LabelSelector}
		if want := [4]string{tt.verb, tt.name, tt.field, tt.labelSel}; got != want {
			t.Errorf("%s %s: verb, name, field and label selector %q, want %q", tt.method, tt.target, got, want)
		}
	}
}

// TestPathName: the router's name is the path's, never a selector's.
func TestPathName(t *testing.T) {
	tests := []struct{ target, name string }{
		{"/api/v1/namespaces/ns/pods?fieldSelector=metadata.name=x", ""},
		{"/api/v1/namespaces/ns/pods/p", "p"},
		{"/api/v1/namespaces/ns", "ns"},
		{"/api/v1/namespaces/ns/status", "ns"},
		{"/api/v1/namespaces/ns/pods/p/log", "p"},
		{"/version", ""},
	}
	for _, tt := range tests {
		info, err := NewParser().Parse(httptest.NewRequest("GET", tt.target, nil))
		if err != nil || info.PathName() != tt.name {
			t.Errorf("%s: path name %q (%v), want %q", tt.target, info.PathName(), err, tt.name)
		}
	}
}
