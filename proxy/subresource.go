package proxy

import (
	"net/http"
	"net/url"
	"strings"
)

// Subresource serves a request of pods/proxy, services/proxy or
// nodes/proxy at Location (scheme, host and the path after .../proxy), as
// kube does: the client's query goes on, a trailing slash is kept, a GET
// or HEAD of the bare root is redirected to the root with a slash, the
// backend sees the client's Host, its redirects and HTML links are
// rewritten to stay under the proxy path and are never followed, and an
// upgrade (WebSocket, SPDY) is tunnelled once the backend accepted it.
type Subresource struct {
	Location *url.URL
	// Transport and UpgradeTransport are a Handler's.
	Transport, UpgradeTransport http.RoundTripper
}

// ServeHTTP implements http.Handler.
func (s *Subresource) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	target := *s.Location
	// kube sends an upgrade to the location as it is, without the query.
	if !IsUpgrade(r) {
		target.RawQuery = r.URL.RawQuery
		if !strings.HasSuffix(target.Path, "/") && strings.HasSuffix(r.URL.Path, "/") {
			target.Path += "/"
		}
		if target.Path == "" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			redirectToRoot(w, r)
			return
		}
	}
	if target.Scheme == "" {
		target.Scheme = "http"
	}
	h := &Handler{Target: &target, Transport: s.Transport, UpgradeTransport: s.UpgradeTransport,
		PassHost: true, RewriteLinks: true}
	h.ServeHTTP(w, r)
}

// redirectToRoot sends a client asking for the proxy's bare path to the
// path with a slash, where relative links of the backend's root page
// resolve under the proxy.
func redirectToRoot(w http.ResponseWriter, r *http.Request) {
	loc := r.URL.Path + "/"
	if r.URL.RawQuery != "" {
		loc += "?" + r.URL.RawQuery
	}
	w.Header().Set("Location", loc)
	w.WriteHeader(http.StatusMovedPermanently)
}
