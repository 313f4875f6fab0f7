package aggregator

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/transport"

	"github.com/capstan-io/capstan/audit"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/proxy"
	"github.com/capstan-io/capstan/proxy/serviceresolver"
	"github.com/capstan-io/capstan/request"
	"github.com/capstan-io/capstan/storage"
)

// discoveryTimeout bounds a proxied /apis/<group>/<version>: clients ask
// every server for it and should not wait long for one.
const discoveryTimeout = 5 * time.Second

// proxyHandler sends the requests for remote APIServices' group versions
// to their Services, after the chain's authentication, authorization and
// flow control, as the user the chain authenticated.
type proxyHandler struct {
	routes          *routes
	resolver        serviceresolver.Resolver
	rejectRedirects bool
	logger          *slog.Logger
}

// groupVersionOf is the group version r is for: a resource request's, or
// /apis/<group>/<version>[/...] for discovery.
func groupVersionOf(info *request.Info) (schema.GroupVersion, bool) {
	if info.IsResourceRequest {
		return schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}, true
	}
	parts := strings.Split(strings.Trim(info.Path, "/"), "/")
	if len(parts) >= 3 && parts[0] == "apis" {
		return schema.GroupVersion{Group: parts[1], Version: parts[2]}, true
	}
	return schema.GroupVersion{}, false
}

// Serves claims the requests of remote APIServices.
func (h *proxyHandler) Serves(info *request.Info) bool {
	gv, ok := groupVersionOf(info)
	return ok && h.routes.get(gv) != nil
}

// unavailable is kube's answer when an APIService's backend cannot serve:
// plain text, not a Status.
func unavailable(w http.ResponseWriter, _ *http.Request, err error) {
	http.Error(w, err.Error(), http.StatusServiceUnavailable)
}

func (h *proxyHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	info, _ := request.InfoFrom(r.Context())
	gv, _ := groupVersionOf(info)
	t := h.routes.get(gv)
	user, ok := authn.UserFrom(r.Context())
	switch {
	case t == nil:
		http.Error(w, "", http.StatusNotFound)
		return
	case !t.available:
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		return
	case t.err != nil:
		http.Error(w, t.err.Error(), http.StatusInternalServerError)
		return
	case !ok:
		http.Error(w, "missing user", http.StatusInternalServerError)
		return
	}
	ctx := r.Context()
	loc, err := h.resolver.Resolve(ctx, t.namespace, t.service, t.port)
	if err != nil {
		h.logger.Error("resolving an APIService's service", "apiservice", t.name, "err", err)
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		return
	}
	if !info.IsResourceRequest && len(strings.Split(strings.Trim(info.Path, "/"), "/")) == 3 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, discoveryTimeout)
		defer cancel()
	}
	target := &url.URL{Scheme: "https", Host: loc.Host, Path: r.URL.Path, RawQuery: r.URL.Query().Encode()}
	auditID := ""
	if ac := audit.From(ctx); ac != nil {
		auditID = ac.AuditID()
	}
	// The backend owns the request now: a watch's seats go back at once,
	// as kube's flow control lets go of delegated requests.
	storage.WatchInitialized(ctx)
	p := &proxy.Handler{Target: target, Transport: t.traced, UpgradeTransport: t.upgrade,
		RejectRedirects: h.rejectRedirects, Responder: proxy.ErrorResponderFunc(unavailable), Logger: h.logger,
		Rewrite: func(out *http.Request) {
			out.Header.Del("Authorization")
			transport.SetAuthProxyHeaders(out, user.Name, user.UID, user.Groups, user.Extra)
			if auditID != "" {
				out.Header.Set(audit.HeaderAuditID, auditID)
			}
		}}
	p.ServeHTTP(w, r.WithContext(ctx))
}
