package metrics

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/capstan-io/capstan/request"
)

// Request is what the chain learns about one request while it runs:
// which handler took it (only then are its resource labels bounded), the
// time it spent waiting for webhooks and for its APF seats (left out of
// the SLI duration), and the code of a termination. Handlers may run on
// another goroutine than the filter that reads it (the timeout filter's),
// so every field is atomic.
type Request struct {
	start      time.Time
	labels     atomic.Pointer[Labels] // set once a handler takes the request
	excluded   atomic.Int64           // nanoseconds waited on webhooks and APF
	terminated atomic.Int32           // a code the server answered in self-defense
	self       atomic.Bool            // the request is the server's own (system:apiserver)
	// filterStart is when the filter being timed began; the filters run
	// one after the other on one goroutine.
	filterStart time.Time
}

type requestKey struct{}

// Start returns ctx carrying a new Request that began now.
func Start(ctx context.Context, now time.Time) (context.Context, *Request) {
	rq := &Request{start: now}
	return context.WithValue(ctx, requestKey{}, rq), rq
}

func from(ctx context.Context) *Request {
	rq, _ := ctx.Value(requestKey{}).(*Request)
	return rq
}

// Routed records that a resource handler serves r, so its labels are
// those of a resource capstan has. It returns the function to call when
// the handler returns: a long-running request (a watch) is counted in
// apiserver_longrunning_requests until then.
func Routed(r *http.Request, info *request.Info) (done func()) {
	rq := from(r.Context())
	if rq == nil {
		return func() {}
	}
	l := ResourceLabels(r, info)
	rq.labels.Store(&l)
	if info.Verb != "watch" && !connectSubresources[info.Subresource] {
		return func() {}
	}
	g := longRunningRequests.WithLabelValues(l.Verb, l.Group, l.Version, l.Resource, l.Subresource, l.Scope, l.Component)
	g.Inc()
	return g.Dec
}

// RoutedPath records that a non-resource handler serves the request, by
// the pattern it was registered under (never the path the client sent).
// Discovery is the component "apiserver", as in kube; other paths have
// none.
func RoutedPath(ctx context.Context, method, pattern string, discovery bool) {
	rq := from(ctx)
	if rq == nil {
		return
	}
	l := Labels{Verb: methodVerb(method), Subresource: pattern}
	if discovery {
		l.Component = "apiserver"
	}
	rq.labels.Store(&l)
}

// Terminated records that the server answered the request with code in
// self-defense (429 over its limits, 504 past its timeout).
func Terminated(ctx context.Context, code int) {
	if rq := from(ctx); rq != nil {
		rq.terminated.Store(int32(code))
	}
}

// Waited adds time the request spent waiting for webhooks or its APF
// seats: kube's SLI duration leaves it out.
func Waited(ctx context.Context, d time.Duration) {
	if rq := from(ctx); rq != nil {
		rq.excluded.Add(int64(d))
	}
}

// SelfRequest marks the request as the server's own.
func SelfRequest(ctx context.Context) {
	if rq := from(ctx); rq != nil {
		rq.self.Store(true)
	}
}

// Done records a request the chain finished with code and size bytes
// written: a request no handler took counts only if the server
// terminated it, with its verb and scope and no resource. contentType is
// the request's, read before it was served: a terminated handler may
// still be changing the request's headers.
func (rq *Request) Done(r *http.Request, contentType string, info *request.Info, code, size int) {
	l := rq.labels.Load()
	term := int(rq.terminated.Load())
	if term != 0 {
		code = term
		if l == nil {
			l = &Labels{Verb: methodVerb(r.Method), Scope: scopeLabel(info), DryRun: dryRunLabel(r.URL), Component: "apiserver"}
			if info.IsResourceRequest {
				l.Verb = resourceVerb(r.Method, contentType, &request.Info{Verb: info.Verb})
			}
		}
		terminations.WithLabelValues(l.Verb, l.Group, l.Version, l.Resource, l.Subresource, l.Scope, l.Component, codeLabel(code)).Inc()
	}
	if l == nil {
		return
	}
	elapsed := time.Since(rq.start)
	route := routes.get(*l)
	route.totals.get(code).Inc()
	route.duration.Observe(elapsed.Seconds())
	fieldValidations.get(fieldValidationLabel(r.URL))
	if route.sli != nil {
		sli := elapsed - time.Duration(rq.excluded.Load())
		route.sli.Observe(sli.Seconds())
	}
	if info.Verb == "get" || info.Verb == "list" {
		route.sizes().Observe(float64(size))
	}
	if rq.self.Load() {
		selfRequests.WithLabelValues(l.Verb, l.Group, l.Resource, l.Subresource).Inc()
	}
}

// routeSeries are the series of the request families that one route's
// labels select: looked up once per route, not once per request.
type routeSeries struct {
	duration prometheus.Observer
	sli      prometheus.Observer // nil for dry runs, which kube's SLI leaves out
	sizes    func() prometheus.Observer
	totals   *seriesCache[int, prometheus.Counter] // by code
}

var routes = newSeriesCache(func(l Labels) *routeSeries {
	rs := &routeSeries{
		duration: requestDuration.WithLabelValues(l.Verb, l.DryRun, l.Group, l.Version, l.Resource, l.Subresource, l.Scope, l.Component),
		// Only GETs and LISTs have a response size series, as in kube.
		sizes: sync.OnceValue(func() prometheus.Observer {
			return responseSizes.WithLabelValues(l.Verb, l.Group, l.Version, l.Resource, l.Subresource, l.Scope, l.Component)
		}),
		totals: newSeriesCache(func(code int) prometheus.Counter {
			return requestTotal.WithLabelValues(l.Verb, l.DryRun, l.Group, l.Version, l.Resource, l.Subresource, l.Scope, l.Component, codeLabel(code))
		}),
	}
	if l.DryRun == "" {
		rs.sli = requestSLIDuration.WithLabelValues(l.Verb, l.Group, l.Version, l.Resource, l.Subresource, l.Scope, l.Component)
	}
	return rs
})

// fieldValidations makes the field validation series a request's
// fieldValidation parameter selects (kube's family has them, unobserved).
var fieldValidations = newSeriesCache(func(v string) prometheus.Observer {
	return fieldValidationDuration.WithLabelValues(v)
})
