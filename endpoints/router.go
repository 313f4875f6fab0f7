package endpoints

import (
	"net/http"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/endpoints/handlers"
	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/request"
	"github.com/capstan-io/capstan/warning"
)

// Router serves the resource requests of the groups installed into it. It
// reads the request's Info, set by the request-info filter, so routing is a
// map lookup rather than a path match.
type Router struct {
	scopes     map[string]*handlers.Scope // by "group/version/resource[/sub]"
	versions   map[schema.GroupVersion]bool
	serializer runtime.NegotiatedSerializer
}

// NewRouter returns an empty Router.
func NewRouter(serializer runtime.NegotiatedSerializer) *Router {
	return &Router{scopes: map[string]*handlers.Scope{}, versions: map[schema.GroupVersion]bool{}, serializer: serializer}
}

// Add installs the scopes Install built for group.
func (rt *Router) Add(group string, scopes map[string]*handlers.Scope) {
	for key, s := range scopes {
		rt.scopes[group+"/"+key] = s
		rt.versions[s.Resource.GroupVersion()] = true
	}
}

// Serves reports whether the router serves the group version of info.
func (rt *Router) Serves(info *request.Info) bool {
	return info.IsResourceRequest && rt.versions[schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}]
}

// ServeHTTP dispatches a resource request to the handler of its verb.
func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	info, ok := request.InfoFrom(r.Context())
	if !ok {
		rt.notFound(w, r)
		return
	}
	key := info.APIGroup + "/" + info.APIVersion + "/" + info.Resource
	if info.Subresource != "" {
		key += "/" + info.Subresource
	}
	s, ok := rt.scopes[key]
	if !ok || !scopeMatches(s, info) {
		rt.notFound(w, r)
		return
	}
	defer metrics.Routed(r, info)()
	ctx := r.Context()
	if s.Namespaced {
		ctx = request.WithNamespace(ctx, info.Namespace)
	}
	// Storage and strategies raise warnings through the context.
	r = r.WithContext(warning.WithHeader(ctx, w.Header()))
	if !dispatch(s, w, r, info) {
		handlers.WriteStatus(w, r, rt.serializer, handlers.ErrorToStatus(handlers.MethodNotAllowed(), nil))
	}
}

// scopeMatches checks the namespace part of the path against the scope:
// a namespaced object needs a namespace, a cluster-scoped one must have none.
func scopeMatches(s *handlers.Scope, info *request.Info) bool {
	if !s.Namespaced {
		// /namespaces/{name}[/{subresource}] is a namespace itself.
		return info.Namespace == "" || (info.Resource == "namespaces" && info.Namespace == info.Name)
	}
	if info.Namespace == "" {
		return info.Name == "" && (info.Verb == "list" || info.Verb == "watch")
	}
	return true
}

// dispatch calls the handler of the request's verb; false if there is none.
func dispatch(s *handlers.Scope, w http.ResponseWriter, r *http.Request, info *request.Info) bool {
	if _, ok := s.Storage.(rest.Connecter); ok && info.Name != "" && info.Subresource != "" {
		s.Connect(w, r, info.Name)
		return true
	}
	switch {
	case info.Name == "" && (info.Verb == "list" || info.Verb == "watch"):
		s.List(w, r, info.Verb == "watch")
	case info.Verb == "create" && (info.Name == "" || info.Subresource != ""):
		s.Create(w, r, info.Name)
	case info.Name == "" && info.Verb == "deletecollection":
		s.DeleteCollection(w, r)
	case info.Name != "" && info.Verb == "get":
		s.Get(w, r, info.Name)
	case info.Name != "" && info.Verb == "watch":
		s.WatchOne(w, r, info.Name)
	case info.Name != "" && info.Verb == "update":
		s.Update(w, r, info.Name)
	case info.Name != "" && info.Verb == "patch":
		s.Patch(w, r, info.Name)
	case info.Name != "" && info.Verb == "delete":
		s.Delete(w, r, info.Name)
	default:
		return false
	}
	return true
}

func (rt *Router) notFound(w http.ResponseWriter, r *http.Request) {
	handlers.WriteStatus(w, r, rt.serializer, handlers.ErrorToStatus(NotFoundError(), nil))
}

// NotFoundError is kube's answer for a path nothing serves.
func NotFoundError() error {
	return handlers.NewStatusError(http.StatusNotFound, "NotFound", "the server could not find the requested resource")
}
