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
	deprecated map[string]string          // the warning of every request to a deprecated kind, by scope key
	versions   map[schema.GroupVersion]bool
	serializer runtime.NegotiatedSerializer
}

// NewRouter returns an empty Router.
func NewRouter(serializer runtime.NegotiatedSerializer) *Router {
	return &Router{scopes: map[string]*handlers.Scope{}, deprecated: map[string]string{},
		versions: map[schema.GroupVersion]bool{}, serializer: serializer}
}

// Add installs the scopes Install built for group.
func (rt *Router) Add(group string, scopes map[string]*handlers.Scope) {
	for key, s := range scopes {
		rt.scopes[group+"/"+key] = s
		rt.versions[s.Resource.GroupVersion()] = true
		if msg := deprecationWarning(s); msg != "" {
			rt.deprecated[group+"/"+key] = msg
		}
	}
}

// Serves reports whether the router serves the group version of info.
func (rt *Router) Serves(info *request.Info) bool {
	return info.IsResourceRequest && rt.versions[schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}]
}

// ServeHTTP dispatches a resource request to the handler of its verb.
func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	info, ok := request.InfoFrom(r.Context())
	// The /proxy/ paths kube still parses are served no more.
	if !ok || info.Verb == "proxy" {
		rt.notFound(w, r)
		return
	}
	key := info.APIGroup + "/" + info.APIVersion + "/" + info.Resource
	if info.Subresource != "" {
		key += "/" + info.Subresource
	}
	s, ok := rt.scopes[key]
	if !ok {
		rt.notFound(w, r)
		return
	}
	if !scopeMatches(s, info) {
		// A namespaced resource's path without a namespace serves lists
		// and watches only: kube's router refuses other methods there.
		if s.Namespaced && info.Namespace == "" && info.PathName() == "" {
			handlers.WriteStatus(w, r, rt.serializer, handlers.ErrorToStatus(handlers.MethodNotAllowed(), nil))
			return
		}
		rt.notFound(w, r)
		return
	}
	defer metrics.Routed(r, info)()
	ctx, span := startVerbSpan(r.Context(), r, info)
	defer span.End()
	if s.Namespaced {
		ctx = request.WithNamespace(ctx, info.Namespace)
	}
	// Storage and strategies raise warnings through the context.
	r = r.WithContext(warning.WithHeader(ctx, w.Header()))
	handle := handlerOf(s, info)
	if handle == nil {
		handlers.WriteStatus(w, r, rt.serializer, handlers.ErrorToStatus(handlers.MethodNotAllowed(), nil))
		return
	}
	// kube's router refuses a patch media type it has no route for before
	// any handler, so before the deprecation warning.
	if msg := rt.deprecated[key]; msg != "" && (info.Verb != "patch" || s.RoutesPatchType(r)) {
		warning.Add(r.Context(), msg)
	}
	handle(w, r)
}

// scopeMatches checks the namespace part of the path against the scope:
// a namespaced object needs a namespace, a cluster-scoped one must have none.
func scopeMatches(s *handlers.Scope, info *request.Info) bool {
	name := info.PathName()
	if !s.Namespaced {
		// /namespaces/{name}[/{subresource}] is a namespace itself.
		return info.Namespace == "" || (info.Resource == "namespaces" && info.Namespace == name)
	}
	if info.Namespace == "" {
		return name == "" && (info.Verb == "list" || info.Verb == "watch")
	}
	return true
}

// handlerOf is the handler of the request's verb, or nil if there is none.
func handlerOf(s *handlers.Scope, info *request.Info) http.HandlerFunc {
	// The name of the path, not one a list's field selector names.
	name := info.PathName()
	if _, ok := s.Storage.(rest.Connecter); ok && name != "" && info.Subresource != "" {
		return func(w http.ResponseWriter, r *http.Request) { s.Connect(w, r, name) }
	}
	switch {
	case name == "" && (info.Verb == "list" || info.Verb == "watch"):
		watch := info.Verb == "watch"
		return func(w http.ResponseWriter, r *http.Request) { s.List(w, r, watch) }
	case info.Verb == "create" && (name == "" || info.Subresource != ""):
		return func(w http.ResponseWriter, r *http.Request) { s.Create(w, r, name) }
	case name == "" && info.Verb == "deletecollection":
		return s.DeleteCollection
	case name != "" && info.Verb == "get":
		return func(w http.ResponseWriter, r *http.Request) { s.Get(w, r, name) }
	case name != "" && info.Verb == "watch":
		return func(w http.ResponseWriter, r *http.Request) { s.WatchOne(w, r, name) }
	case name != "" && info.Verb == "update":
		return func(w http.ResponseWriter, r *http.Request) { s.Update(w, r, name) }
	case name != "" && info.Verb == "patch":
		return func(w http.ResponseWriter, r *http.Request) { s.Patch(w, r, name) }
	case name != "" && info.Verb == "delete":
		return func(w http.ResponseWriter, r *http.Request) { s.Delete(w, r, name) }
	}
	return nil
}

func (rt *Router) notFound(w http.ResponseWriter, r *http.Request) {
	handlers.WriteStatus(w, r, rt.serializer, handlers.ErrorToStatus(NotFoundError(), nil))
}

// NotFoundError is kube's answer for a path nothing serves.
func NotFoundError() error {
	return handlers.NewStatusError(http.StatusNotFound, "NotFound", "the server could not find the requested resource")
}
