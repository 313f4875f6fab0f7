package server

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/capstan-io/capstan/request"
	"github.com/capstan-io/capstan/server/filters"
)

// draining is the state of a server's graceful shutdown that its handler
// chain reads: once the shutdown delay is over, requests from outside get
// 429 with Retry-After (their clients try another replica), and ordinary
// requests are counted so that the listener can stay open until they are
// done (ShutdownConfig.SendRetryAfter).
type draining struct {
	mu       sync.Mutex // guards the fields below
	over     bool       // the shutdown delay is over
	inFlight int        // ordinary (not long-running) requests being served
	idle     chan struct{}
}

// filter refuses outside requests once the delay is over and counts the
// ordinary ones in flight. Health checks and the in-process loopback
// client are served to the end, as kube serves them.
func (d *draining) filter(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, _ := request.InfoFrom(r.Context())
		exempt := isLoopback(r.Context()) || isHealthPath(r.URL.Path)
		d.mu.Lock()
		if d.over && !exempt {
			d.mu.Unlock()
			w.Header().Set("Connection", "close")
			w.Header().Set("Retry-After", "5")
			http.Error(w, "The apiserver is shutting down, please try again later.", http.StatusTooManyRequests)
			return
		}
		counted := !exempt && !filters.LongRunning(info)
		if counted {
			d.inFlight++
		}
		d.mu.Unlock()
		if counted {
			defer d.done()
		}
		h.ServeHTTP(w, r)
	})
}

func (d *draining) done() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.inFlight--
	if d.inFlight == 0 && d.idle != nil {
		close(d.idle)
		d.idle = nil
	}
}

// delayOver starts refusing new requests; the channel closes once no
// ordinary request is in flight.
func (d *draining) delayOver() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.over = true
	idle := make(chan struct{})
	if d.inFlight == 0 {
		close(idle)
	} else {
		d.idle = idle
	}
	return idle
}

func isHealthPath(p string) bool {
	for _, prefix := range []string{"/healthz", "/livez", "/readyz"} {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

type loopbackKey struct{}

// withLoopback marks a request of the in-process loopback client.
func withLoopback(ctx context.Context) context.Context {
	return context.WithValue(ctx, loopbackKey{}, true)
}

func isLoopback(ctx context.Context) bool {
	v, _ := ctx.Value(loopbackKey{}).(bool)
	return v
}

// drainThenShutdown waits, with SendRetryAfter, until the requests in
// flight are done (new ones meanwhile get 429), then closes the listener
// and waits for what is left; watches end after the grace period.
func (p *PreparedServer) drainThenShutdown(srv *http.Server) error {
	c := p.config
	idle := p.draining.delayOver()
	limit := c.Limits.RequestTimeout + 5*time.Second
	if c.Shutdown.SendRetryAfter {
		select {
		case <-idle:
		case <-time.After(limit):
		}
	}
	drainCtx, cancel := context.WithTimeout(context.Background(), limit+c.Shutdown.WatchTerminationGracePeriod)
	defer cancel()
	// Watches never finish by themselves: end them once no new requests
	// can arrive (after the grace period, if any), so that Shutdown waits
	// only for ordinary requests.
	grace := max(c.Shutdown.WatchTerminationGracePeriod, 100*time.Millisecond)
	stop := time.AfterFunc(grace, p.endWatches)
	defer stop.Stop()
	return srv.Shutdown(drainCtx)
}
