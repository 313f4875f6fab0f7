package request

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

var fuzzMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodOptions, "CONNECT", "PROPFIND"}

var resourceVerbs = map[string]bool{"get": true, "list": true, "watch": true, "create": true, "update": true,
	"patch": true, "delete": true, "deletecollection": true, "proxy": true, "": true}

// FuzzParse: any path and query parse without a panic into an Info whose
// parts are single path segments (authorization and audit match on them,
// so a '/' smuggled into a name or namespace would widen a rule), with a
// verb kube knows. (Empty segments, as in /api/v1//x, are kept as kube
// keeps them: its parser splits the same way.)
func FuzzParse(f *testing.F) {
	for _, seed := range []struct {
		method      uint8
		path, query string
	}{
		{0, "/api/v1/namespaces/default/pods/p/log", "follow=true"},
		{0, "/apis/apps/v1/watch/namespaces/ns/deployments", ""},
		{0, "/api/v1/pods", "watch=1&fieldSelector=spec.nodeName%3Dn&labelSelector=a%3Db"},
		{5, "/api/v1/namespaces/ns/configmaps", ""},
		{3, "/api/v1/namespaces/ns/finalize", ""},
		{0, "/apis/", ""},
		{0, "/api/v1/namespaces/../pods/..", ""},
		{4, "//api//v1///namespaces/a%2Fb/pods/", "watch=TRUE"},
		{2, "/apis/g/v/namespaces/ns/r/n/s/extra/more", ""},
		{0, "/api/v1/namespaces/ns/pods/x\x00y", ""},
	} {
		f.Add(seed.method, seed.path, seed.query)
	}
	p := NewParser()
	f.Fuzz(func(t *testing.T, method uint8, path, query string) {
		r := &http.Request{Method: fuzzMethods[int(method)%len(fuzzMethods)], URL: &url.URL{Path: path, RawQuery: query}, Header: http.Header{}}
		info, err := p.Parse(r)
		if err != nil {
			if !info.IsResourceRequest {
				t.Fatalf("%q: error %v for a non-resource path", path, err)
			}
			return
		}
		if info.Path != path {
			t.Fatalf("Path %q, want %q", info.Path, path)
		}
		if !info.IsResourceRequest {
			return
		}
		if !resourceVerbs[info.Verb] {
			t.Errorf("verb %q of %s %q", info.Verb, r.Method, path)
		}
		for name, part := range map[string]string{"group": info.APIGroup, "version": info.APIVersion, "namespace": info.Namespace,
			"resource": info.Resource, "name": info.Name, "subresource": info.Subresource} {
			if strings.Contains(part, "/") {
				t.Errorf("%s %q of %q holds a '/'", name, part, path)
			}
		}
		if (info.Verb == "list" || info.Verb == "deletecollection") && info.PathName() != "" {
			t.Errorf("%s of one object %q in %q", info.Verb, info.PathName(), path)
		}
	})
}
