package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"k8s.io/client-go/rest"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/endpoints"
	"github.com/capstan-io/capstan/endpoints/discovery"
	"github.com/capstan-io/capstan/endpoints/handlers"
	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/openapi"
	"github.com/capstan-io/capstan/request"
	"github.com/capstan-io/capstan/server/filters"
)

// Server is one server of the chain. Requests it does not serve go to its
// delegate; only the outermost server's handler chain faces clients.
type Server struct {
	name     string
	config   *completedConfig
	delegate *Server // nil for the empty delegate at the end of the chain
	router   *endpoints.Router
	versions *endpoints.VersionIndex // of the groups installed into router
	mux      *http.ServeMux          // non-API paths this server serves
	groups   groupSet                // groups whose discovery this server answers
	notFound http.Handler            // only the empty delegate has one
	// dynamic serves resources that come and go while the server runs
	// (custom resources); nil for servers without any.
	dynamic ResourceHandler

	// draining refuses and counts requests during shutdown.
	draining draining
	// watchStop ends long-running requests at shutdown.
	watchStop  context.Context
	endWatches context.CancelFunc

	mu          sync.Mutex // guards the hooks
	postStart   []namedHook
	preShutdown []namedHook

	// Handler is the full handler chain, for serving.
	Handler http.Handler
}

// HookContext is what a post-start hook receives.
type HookContext struct {
	context.Context
	// LoopbackClientConfig reaches this server's chain in-process as
	// system:apiserver.
	LoopbackClientConfig *rest.Config
	// HooksDone is closed once every post-start hook of the chain has
	// returned. Work readiness does not wait for (controllers that kube
	// runs in its controller manager) may wait for it, so as not to take
	// CPU from the start.
	HooksDone <-chan struct{}
}

// AfterHooks runs f on a goroutine of its own once every post-start hook
// of the chain has returned, unless the server stops first.
func (hc HookContext) AfterHooks(f func()) {
	go func() {
		select {
		case <-hc.HooksDone:
			f()
		case <-hc.Done():
		}
	}()
}

// HookFunc is a post-start or pre-shutdown hook.
type HookFunc func(ctx HookContext) error

type namedHook struct {
	name  string
	fn    HookFunc
	check *hookCheck
}

// NewEmptyDelegate is the end of a chain: it answers everything with h.
func NewEmptyDelegate(h http.Handler) *Server {
	return &Server{name: "empty", notFound: h}
}

// New builds a server named name whose unserved requests go to delegate.
func (c CompletedConfig) New(name string, delegate *Server) (*Server, error) {
	if delegate == nil {
		return nil, fmt.Errorf("server %q needs a delegate", name)
	}
	s := &Server{
		name: name, config: c.completedConfig, delegate: delegate,
		router: endpoints.NewRouter(c.Codecs.Serializer), mux: http.NewServeMux(),
	}
	if c.Codecs.Convertor != nil && c.Codecs.Creater != nil {
		s.versions = endpoints.NewVersionIndex(c.Codecs.Convertor, c.Codecs.Creater)
	}
	s.watchStop, s.endWatches = context.WithCancel(context.Background())
	s.Handler = s.buildHandlerChain(http.HandlerFunc(s.direct))
	return s, nil
}

func (s *Server) buildHandlerChain(h http.Handler) http.Handler {
	c := s.config
	auth := authn.Union(c.Loopback.Authenticator(), c.Authentication)
	limit := filters.WithMaxInFlightLimit(c.Limits.MaxRequestsInFlight, c.Limits.MaxMutatingRequestsInFlight)
	var limitSpan filters.Filter // kube spans only priority and fairness
	if c.FlowControl != nil {
		limit = filters.WithFilterLatency("priorityandfairness", filters.WithPriorityAndFairness(c.FlowControl))
		limitSpan = filters.WithFilterSpan(c.Tracer, "priorityandfairness")
	}
	return filters.Chain(h,
		filters.WithAuditID(c.Audit),
		filters.WithTraceAuditID(c.Tracer),
		filters.WithHTTPLog(c.Logger, c.Debug.RequestLog),
		filters.WithPanicRecovery(c.Logger),
		filters.WithRequestInfo(request.NewParser()),
		filters.WithMetrics(),
		// kube's order: a draining server's 429 carries neither HSTS nor
		// Cache-Control.
		s.draining.filter,
		filters.WithHSTS(c.Serving.HSTSDirectives),
		filters.WithCacheControl(),
		filters.WithProbabilisticGoaway(c.Serving.GoawayChance),
		filters.WithLongRunningStop(s.watchStop),
		filters.WithTimeout(c.Limits.RequestTimeout),
		filters.WithWarningRecorder(),
		filters.WithCORS(c.Serving.CORSAllowedOrigins),
		filters.WithFilterLatency("authentication", filters.WithAuthentication(auth, c.AuthenticationHeaders, c.Logger)),
		filters.WithTracing(c.Tracer),
		filters.WithFilterSpan(c.Tracer, "audit"),
		filters.WithFilterLatency("audit", filters.WithAudit(c.Audit, c.Logger)),
		filters.WithFilterSpan(c.Tracer, "impersonation"),
		filters.WithFilterLatency("impersonation", filters.WithImpersonation(c.Authorization, c.Logger)),
		limitSpan,
		limit,
		filters.WithFilterSpan(c.Tracer, "authorization"),
		filters.WithFilterLatency("authorization", filters.WithAuthorization(c.Authorization, c.Logger)),
	)
}

// UnprotectedHandler serves a request that the outer server's filters have
// already authenticated and authorized.
func (s *Server) UnprotectedHandler() http.Handler {
	if s.notFound != nil {
		return s.notFound
	}
	return http.HandlerFunc(s.direct)
}

// direct routes a request: API paths of this server's groups to the
// router, registered non-API paths to the mux, the rest to the delegate.
func (s *Server) direct(w http.ResponseWriter, r *http.Request) {
	info, _ := request.InfoFrom(r.Context())
	switch {
	case strings.Contains(r.URL.Path, "//"):
		// kube's routes never match a path with an empty segment.
		s.delegate.UnprotectedHandler().ServeHTTP(w, r)
	case info != nil && s.router.Serves(info):
		s.router.ServeHTTP(w, r)
	case info != nil && s.dynamic != nil && s.dynamic.Serves(info):
		s.dynamic.ServeHTTP(w, r)
	case info != nil && s.servesDiscovery(w, r, info):
	case s.muxServes(r):
		s.mux.ServeHTTP(w, r)
	default:
		s.delegate.UnprotectedHandler().ServeHTTP(w, r)
	}
}

// muxServes reports whether the mux serves r, and records its pattern
// as the request's path in the request families.
func (s *Server) muxServes(r *http.Request) bool {
	_, pattern := s.mux.Handler(r)
	if pattern == "" {
		return false
	}
	metrics.RoutedPath(r.Context(), r.Method, pattern, pattern == "/api" || pattern == "/apis" || pattern == "/apis/{$}")
	return true
}

// servesDiscovery serves /apis/<group>[/<version>] and /api/v1 for the
// groups this server owns.
func (s *Server) servesDiscovery(w http.ResponseWriter, r *http.Request, info *request.Info) bool {
	if info.IsResourceRequest || r.Method != http.MethodGet {
		return false
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	reg := s.config.Discovery
	served := false
	switch {
	case len(parts) == 2 && parts[0] == "api" && s.groups.has(""):
		served = reg.ServeVersion(w, r, "", parts[1])
	case len(parts) == 2 && parts[0] == "apis" && s.groups.has(parts[1]):
		served = reg.ServeGroup(w, r, parts[1])
	case len(parts) == 3 && parts[0] == "apis" && s.groups.has(parts[1]):
		served = reg.ServeVersion(w, r, parts[1], parts[2])
	}
	if served {
		metrics.RoutedPath(r.Context(), r.Method, parts[0], true)
	}
	return served
}

// InstallAPIGroup serves the resources of g and adds it to discovery.
func (s *Server) InstallAPIGroup(g endpoints.APIGroup) error {
	g, ok := s.config.APIs.Filter(g)
	if !ok {
		return nil
	}
	scopes, dg, err := s.Installer().Install(g)
	if err != nil {
		return fmt.Errorf("installing API group %q: %w", g.Name, err)
	}
	s.router.Add(g.Name, scopes)
	s.SetDiscoveryGroup(dg)
	return nil
}

// Installer is what builds this server's endpoints: its codecs, admission
// chain and limits.
func (s *Server) Installer() *endpoints.Config {
	c := s.config
	return &endpoints.Config{
		Common: handlers.Common{
			Serializer: c.Codecs.Serializer, ParameterCodec: c.Codecs.ParameterCodec,
			Creater: c.Codecs.Creater, Typer: c.Codecs.Typer, Admission: &c.Admission,
			MaxRequestBodyBytes: c.Limits.MaxRequestBodyBytes, MinRequestTimeout: c.Limits.MinRequestTimeout,
			Logger: c.Logger, Wire: c.wire,
		},
		TypeConverter: c.Codecs.TypeConverter, Convertor: c.Codecs.Convertor, Versions: s.versions,
	}
}

// ResourceHandler serves resources that are installed and removed while
// the server runs, such as the custom resources of the CRD server.
type ResourceHandler interface {
	// Serves reports whether the handler serves the request's resource.
	Serves(info *request.Info) bool
	http.Handler
}

// SetResourceHandler makes h serve the resource requests it claims. Call
// it before Run.
func (s *Server) SetResourceHandler(h ResourceHandler) { s.dynamic = h }

// SetDiscoveryGroup adds or replaces a group in discovery and makes this
// server answer /apis/<group>[/<version>] for it. It may be called at any
// time.
func (s *Server) SetDiscoveryGroup(dg discovery.Group) {
	s.groups.add(dg.Name)
	s.config.Discovery.Set(dg)
}

// RemoveDiscoveryGroup removes a group that SetDiscoveryGroup added.
func (s *Server) RemoveDiscoveryGroup(name string) {
	s.groups.remove(name)
	s.config.Discovery.Remove(name)
}

// OpenAPICatalog returns the definitions the chain publishes; nil without.
func (s *Server) OpenAPICatalog() openapi.Catalog { return s.config.OpenAPI }

// Discovery returns the discovery Registry shared by the chain.
func (s *Server) Discovery() *discovery.Registry { return s.config.Discovery }

// groupSet is a set of group names, safe for concurrent use: the CRD
// server changes it while requests read it.
type groupSet struct {
	mu    sync.RWMutex
	names map[string]bool
}

func (g *groupSet) has(name string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.names[name]
}

func (g *groupSet) add(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.names == nil {
		g.names = map[string]bool{}
	}
	g.names[name] = true
}

func (g *groupSet) remove(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.names, name)
}

// Handle serves a non-API path (or a subtree, with a trailing slash).
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// LoopbackClientConfig is the in-process client config of the chain.
func (s *Server) LoopbackClientConfig() *rest.Config { return s.config.Loopback.Config() }

// AddPostStartHook runs fn once the server serves. Until fn returns nil,
// /readyz fails its poststarthook/<name> check.
func (s *Server) AddPostStartHook(name string, fn HookFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.postStart = append(s.postStart, namedHook{name: name, fn: fn, check: &hookCheck{}})
}

// AddPreShutdownHook runs fn when shutdown begins, before requests drain.
func (s *Server) AddPreShutdownHook(name string, fn HookFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.preShutdown = append(s.preShutdown, namedHook{name: name, fn: fn})
}

// chain returns the servers from this one to the last real delegate.
func (s *Server) chain() []*Server {
	var out []*Server
	for cur := s; cur != nil && cur.config != nil; cur = cur.delegate {
		out = append(out, cur)
	}
	return out
}

// WriteNotFound answers a path nothing serves as kube does: a Status under
// /api/ and under /apis/<group>/ of a group some server has (kube's API
// routers answer those), Go's plain 404 for anything else (a group no
// server has, a path that is no API's).
func WriteNotFound(c CompletedConfig) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !routedPath(c, r.URL.Path) {
			http.NotFound(w, r)
			return
		}
		handlers.WriteStatus(w, r, c.Codecs.Serializer, handlers.ErrorToStatus(endpoints.NotFoundError(), nil))
	})
}

// routedPath reports whether kube's API routers would answer path: the
// legacy API's, and the versions of a group discovery knows.
func routedPath(c CompletedConfig, path string) bool {
	if strings.HasPrefix(path, "/api/") {
		return true
	}
	rest, ok := strings.CutPrefix(path, "/apis/")
	if !ok || c.Discovery == nil {
		return false
	}
	group, sub, _ := strings.Cut(rest, "/")
	_, known := c.Discovery.Group(group)
	return known && sub != ""
}

// AddAdmissionPlugin appends a plugin to the admission chain shared by the
// servers built from this server's config. Call it before Run.
func (s *Server) AddAdmissionPlugin(p any) {
	s.config.Admission = append(s.config.Admission, p)
}
