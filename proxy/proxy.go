// Package proxy forwards one request to a backend and its answer back: the
// aggregator's proxy to extension API servers, and the proxies to kubelets,
// nodes, pods and services. Bodies stream both ways and streaming answers
// (watches) are flushed as they arrive. An Upgrade (SPDY, WebSocket) is
// forwarded, and the client's connection is taken over only once the backend
// answered 101 Switching Protocols; an upgrade the backend refused leaves no
// connection that could be reused for another request (CVE-2018-1002105).
// Redirects are never followed, and may be refused (CVE-2020-8559). Which
// destinations a user may reach is the caller's decision; Proxyable and
// GlobalUnicastOnly give kube's rule for addresses taken from objects users
// write (CVE-2022-3294).
package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"golang.org/x/net/http/httpguts"
)

// Handler proxies requests to Target. A Handler is cheap: build one per
// request when the target depends on it.
type Handler struct {
	// Target is where the request goes, path and query included: the
	// request's own path and query are not used, so the caller decides what
	// of them the backend sees.
	Target *url.URL
	// Transport carries ordinary requests.
	Transport http.RoundTripper
	// UpgradeTransport carries upgrade requests. It must speak HTTP/1.1 and
	// should not keep connections (NewTransports builds one); nil refuses
	// upgrades.
	UpgradeTransport http.RoundTripper
	// UpgradeRequired refuses requests that are not upgrades (exec, attach).
	UpgradeRequired bool
	// RejectRedirects answers a backend's redirect with 502 instead of
	// passing it to the client, whose credentials would follow it.
	RejectRedirects bool
	// PassHost sends the client's Host header on, as kube's proxy
	// subresources do, rather than the target's.
	PassHost bool
	// RewriteLinks rewrites what the backend answers for the path it is
	// served under (linkRewriter), as kube's proxy subresources do;
	// upgrades are not rewritten.
	RewriteLinks bool
	// Rewrite, when set, changes the outgoing request last, after hop-by-hop
	// headers were removed, so that a client cannot strip what it sets
	// (front-proxy identity headers) by naming them in Connection.
	Rewrite func(out *http.Request)
	// Responder writes errors: the backend unreachable, a refused upgrade.
	// Nil writes them as metav1.Status (StatusResponder).
	Responder ErrorResponder
	// Logger receives what net/http/httputil logs; nil discards it.
	Logger *slog.Logger
}

// redirectRefused is kube's text for a refused backend redirect.
const redirectRefused = "the backend attempted to redirect this request, which is not permitted"

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	responder := h.Responder
	if responder == nil {
		responder = StatusResponder{}
	}
	upgrade := IsUpgrade(r)
	switch {
	case h.UpgradeRequired && !upgrade:
		responder.Error(w, r, apierrors.NewBadRequest("Upgrade request required"))
		return
	case upgrade && h.UpgradeTransport == nil:
		responder.Error(w, r, apierrors.NewBadRequest("Upgrade request not allowed"))
		return
	}
	transport := h.Transport
	if upgrade {
		transport = h.UpgradeTransport
		// A tunnel lasts until one side closes it, as kube's does, not until
		// the request's deadline: an upgrade on a path that is not
		// long-running (a console subresource) runs under the timeout filter.
		r = r.WithContext(context.WithoutCancel(r.Context()))
	}
	if h.RewriteLinks && !upgrade {
		transport = linkRewriter{prefix: linkPrefix(r.URL.Path, h.Target.Path), next: transport}
	}
	rp := &httputil.ReverseProxy{
		Rewrite:   h.rewrite,
		Transport: unreachable{transport},
		// Streaming answers (no length: watches, logs) are flushed on each
		// write by ReverseProxy itself; the rest need no periodic flush.
		FlushInterval:  0,
		ModifyResponse: h.modifyResponse(upgrade),
		ErrorHandler:   responder.Error,
		ErrorLog:       errorLog(h.Logger),
	}
	rp.ServeHTTP(w, r)
}

func (h *Handler) rewrite(pr *httputil.ProxyRequest) {
	target := *h.Target
	pr.Out.URL = &target
	pr.Out.Host = target.Host
	if h.PassHost {
		pr.Out.Host = pr.In.Host
	}
	// Rewrite drops the inbound X-Forwarded-For; kube keeps the chain of
	// proxies and appends the client, and so does this.
	if prior := pr.In.Header.Values("X-Forwarded-For"); len(prior) > 0 || pr.In.RemoteAddr != "" {
		chain := strings.Join(prior, ", ")
		if ip, _, err := net.SplitHostPort(pr.In.RemoteAddr); err == nil {
			if chain != "" {
				chain += ", "
			}
			chain += ip
		}
		if chain != "" {
			pr.Out.Header.Set("X-Forwarded-For", chain)
		}
	}
	if h.Rewrite != nil {
		h.Rewrite(pr.Out)
	}
}

// modifyResponse enforces the redirect and upgrade rules on the backend's
// answer, and drops its CORS headers: the front server's CORS filter, not
// the backend, decides what browsers may read.
func (h *Handler) modifyResponse(upgrade bool) func(*http.Response) error {
	return func(res *http.Response) error {
		for _, k := range []string{"Access-Control-Allow-Credentials", "Access-Control-Allow-Headers",
			"Access-Control-Allow-Methods", "Access-Control-Allow-Origin"} {
			res.Header.Del(k)
		}
		if h.RejectRedirects && res.StatusCode >= 300 && res.StatusCode <= 399 && res.Header.Get("Location") != "" {
			res.Body.Close()
			res.StatusCode, res.Status = http.StatusBadGateway, "502 Bad Gateway"
			res.Header = http.Header{"Content-Type": {"text/plain; charset=utf-8"}}
			res.Body, res.ContentLength = io.NopCloser(strings.NewReader(redirectRefused)), int64(len(redirectRefused))
			return nil
		}
		if !upgrade || res.StatusCode == http.StatusSwitchingProtocols {
			return nil
		}
		// The backend refused the upgrade. A success code to an upgrade is
		// a confused backend: an error. An error code goes to the client
		// on a connection closed after it, so that nothing the client sends
		// next reaches anything as if the upgrade had happened.
		if res.StatusCode < http.StatusBadRequest {
			return fmt.Errorf("invalid upgrade response: status code %d", res.StatusCode)
		}
		res.Header.Set("Connection", "close")
		return nil
	}
}

// IsUpgrade reports whether r asks to switch protocols (Connection:
// Upgrade), as SPDY and WebSocket clients do.
func IsUpgrade(r *http.Request) bool {
	return httpguts.HeaderValuesContainsToken(r.Header["Connection"], "Upgrade")
}

// unreachable turns a transport's failure into kube's 503 ("error trying
// to reach service"), so that responders write what kube writes.
type unreachable struct{ http.RoundTripper }

func (u unreachable) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := u.RoundTripper.RoundTrip(r)
	if err != nil {
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			return nil, err
		}
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("error trying to reach service: %v", err))
	}
	return res, nil
}
