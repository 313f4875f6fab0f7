package proxy

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestLinkPrefix(t *testing.T) {
	for _, c := range []struct{ client, backend, want string }{
		{"/api/v1/namespaces/n/pods/p/proxy/a/b", "/a/b", "/api/v1/namespaces/n/pods/p/proxy"},
		{"/api/v1/namespaces/n/pods/p/proxy/a/", "/a", "/api/v1/namespaces/n/pods/p/proxy"},
		{"/api/v1/namespaces/n/pods/p/proxy/", "/", "/api/v1/namespaces/n/pods/p/proxy"},
		{"/api/v1/nodes/n/proxy/logs/", "/logs/", "/api/v1/nodes/n/proxy"},
	} {
		if got := linkPrefix(c.client, c.backend); got != c.want {
			t.Errorf("linkPrefix(%q, %q) = %q, want %q", c.client, c.backend, got, c.want)
		}
	}
}

func TestLinkRewrite(t *testing.T) {
	req := &http.Request{URL: &url.URL{Scheme: "http", Host: "10.0.0.5:8080", Path: "/x"}, Host: "api.example:6443"}
	rw := linkRewriter{prefix: "/api/v1/namespaces/n/pods/p/proxy"}
	for _, c := range []struct{ in, want string }{
		{"/docs", "/api/v1/namespaces/n/pods/p/proxy/docs"},
		{"/docs/", "/api/v1/namespaces/n/pods/p/proxy/docs/"},
		{"relative/link", "relative/link"},
		{"http://other.example/x", "http://other.example/x"},
		{"http://10.0.0.5:8080/y?q=1", "/api/v1/namespaces/n/pods/p/proxy/y?q=1"},
		{"https://api.example:6443/z", "https://api.example:6443/api/v1/namespaces/n/pods/p/proxy/z"},
		{"/api/v1/namespaces/n/pods/p/proxy/already", "/api/v1/namespaces/n/pods/p/proxy/already"},
	} {
		u, _ := url.Parse(c.in)
		if got := rw.rewrite(u, req); got != c.want {
			t.Errorf("rewrite(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestRewriteHTML(t *testing.T) {
	in := `<html><body background="/bg.png"><a href="/a">a</a><!-- <a href="/c"> --><script src="/s.js"></script><p title="/t">x</p></body></html>`
	want := `<html><body background="/p/bg.png"><a href="/p/a">a</a><!-- <a href="/c"> --><script src="/p/s.js"></script><p title="/t">x</p></body></html>`
	var out strings.Builder
	err := rewriteHTML(strings.NewReader(in), &out, func(u *url.URL) string { return "/p" + u.String() })
	if err != nil || out.String() != want {
		t.Errorf("rewriteHTML = %q, %v\nwant %q", out.String(), err, want)
	}
}
