package server

import (
	"net/http"
	"net/http/pprof"
	"runtime"
	"time"
)

// installDebug serves pprof at /debug/pprof on the secure port when
// profiling is on: behind the handler chain, so only those the authorizer
// allows the nonResourceURL reach it, as in kube.
func (s *Server) installDebug() {
	d := s.config.Debug
	if !d.Profiling {
		return
	}
	s.Handle("/debug/pprof", http.RedirectHandler("/debug/pprof/", http.StatusFound))
	for path, h := range pprofHandlers() {
		s.Handle(path, h)
	}
	if d.ContentionProfiling {
		runtime.SetBlockProfileRate(1)
	}
}

// pprofHandlers are the pprof paths, shared by the secure port and the
// debug socket.
func pprofHandlers() map[string]http.Handler {
	return map[string]http.Handler{
		"/debug/pprof/":        http.HandlerFunc(pprof.Index),
		"/debug/pprof/cmdline": http.HandlerFunc(pprof.Cmdline),
		"/debug/pprof/profile": http.HandlerFunc(pprof.Profile),
		"/debug/pprof/symbol":  http.HandlerFunc(pprof.Symbol),
		"/debug/pprof/trace":   http.HandlerFunc(pprof.Trace),
	}
}

// nextProtos are the ALPN protocols offered: HTTP/1.1 alone when HTTP/2
// is off.
func nextProtos(disableHTTP2 bool) []string {
	if disableHTTP2 {
		return []string{"http/1.1"}
	}
	return []string{"h2", "http/1.1"}
}

// withinLivezGrace makes a post-start hook's livez check pass while the
// start is younger than the grace period and the hook has not finished.
func (p *PreparedServer) withinLivezGrace(check func(*http.Request) error) func(*http.Request) error {
	grace := p.config.Health.LivezGracePeriod
	if grace <= 0 {
		return check
	}
	return func(r *http.Request) error {
		err := check(r)
		if err != nil && time.Since(p.started) < grace {
			return nil
		}
		return err
	}
}
