package handlers

import (
	"net/http"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/request"
)

// Connect serves a subresource whose storage is a rest.Connecter: the
// query (and, for proxies, the path after the subresource) becomes its
// options, which go through admission as a CONNECT of the options, and
// the request goes to the handler it returns.
func (s *Scope) Connect(w http.ResponseWriter, r *http.Request, name string) {
	c, ok := s.Storage.(rest.Connecter)
	if !ok || !slices.Contains(c.ConnectMethods(), r.Method) {
		s.writeError(w, r, MethodNotSupported(s.GroupResource(), strings.ToLower(r.Method)))
		return
	}
	_, reads := c.(rest.ReadingConnecter)
	if _, dryRun := r.URL.Query()["dryRun"]; dryRun && !reads {
		s.writeError(w, r, apierrors.NewBadRequest("dryRun is not supported"))
		return
	}
	opts, subpath, key := c.NewConnectOptions()
	query := r.URL.Query()
	if subpath {
		query.Set(key, connectSubpath(r))
	}
	if err := DecodeQuery(query, opts); err != nil {
		s.writeError(w, r, apierrors.NewBadRequest(err.Error()))
		return
	}
	if !reads {
		if err := s.admitConnect(r.Context(), name, opts); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	h, err := c.Connect(r.Context(), name, opts)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	h.ServeHTTP(w, r)
}

// connectSubpath is the path after .../<name>/<subresource>, with a
// leading slash when not empty and the request's trailing slash kept.
func connectSubpath(r *http.Request) string {
	info, _ := request.InfoFrom(r.Context())
	if info == nil || len(info.Parts) <= 3 {
		if strings.HasSuffix(r.URL.Path, "/") {
			return "/"
		}
		return ""
	}
	p := "/" + strings.Join(info.Parts[3:], "/")
	if strings.HasSuffix(info.Path, "/") && !strings.HasSuffix(p, "/") {
		p += "/"
	}
	return p
}
