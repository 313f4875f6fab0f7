package flowcontrol

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/capstan-io/capstan/flowcontrol/fairqueuing"
	"github.com/capstan-io/capstan/metrics"
)

// Admission is the outcome of Start: the schema and level a request was
// classified into and, if admitted, its seats.
type Admission struct {
	FlowSchema    *flowcontrolv1.FlowSchema
	PriorityLevel *flowcontrolv1.PriorityLevelConfiguration
	// Width is the request's estimated width.
	Width fairqueuing.Width
	req   *fairqueuing.Request
	level *level
}

// Admitted tells whether the request may be served. When it may not, it
// was rejected (its queue full) or waited past its wait limit.
func (a Admission) Admitted() bool { return a.req != nil }

// Finish gives the seats back. Call it once for an admitted request,
// when it is done (a watch: when its initial events are sent).
func (a Admission) Finish() {
	if a.req != nil {
		a.req.Finish()
	}
}

// Start classifies the request, estimates its width, and waits for its
// seats in its level: at most until ctx is done or the request's wait
// limit (waitContext: counted from arrived) has passed. rawQuery is the
// request's URL query, read only to estimate lists.
func (c *Controller) Start(ctx context.Context, arrived time.Time, d Digest, rawQuery string) Admission {
	st := c.state.Load()
	fs := st.classify(d)
	l := st.levels[fs.Spec.PriorityLevelConfiguration.Name]
	a := Admission{FlowSchema: fs, PriorityLevel: l.pl, level: l}
	var hash uint64
	distinguisher := flowDistinguisher(d, fs.Spec.DistinguisherMethod)
	if l.queuing {
		hash = flowHash(fs.Name, distinguisher)
	}
	width, watchers := c.width(d.Info, rawQuery, l)
	if watchers >= 0 {
		metrics.FlowWatchCount(l.pl.Name, fs.Name, watchers)
	}
	a.Width = width
	descr := fairqueuing.Descr{FlowSchema: fs.Name, FlowDistinguisher: distinguisher, Details: d}
	req := l.queues.StartDescribed(a.Width, hash, descr)
	if req == nil {
		metrics.FlowRejected(l.pl.Name, fs.Name, "queue-full", arrived)
		c.retry.dropped(l.pl.Name)
		return a
	}
	// Most requests are dispatched at once (exempt ones always): the
	// wait's deadline, a timer and four allocations, is made only for
	// those that queue.
	if req.Queued() {
		wait, cancel := c.waitContext(ctx, arrived)
		ok := req.Wait(wait)
		cancel()
		if !ok {
			metrics.FlowRejected(l.pl.Name, fs.Name, "time-out", arrived)
			c.retry.dropped(l.pl.Name)
			return a
		}
	}
	a.req = req
	return a
}

// RetryAfter is the Retry-After, in seconds, for a request the level of
// a rejected.
func (c *Controller) RetryAfter(a Admission) int64 {
	if a.PriorityLevel == nil {
		return 1
	}
	return c.retry.get(a.PriorityLevel.Name)
}

// waitContext bounds how long a request may wait in a queue: a quarter
// of the time it has from arrival to its deadline, or the default wait
// limit without one, and never more than a minute.
func (c *Controller) waitContext(ctx context.Context, arrived time.Time) (context.Context, context.CancelFunc) {
	limit := c.cfg.DefaultWaitLimit
	if deadline, ok := ctx.Deadline(); ok {
		limit = deadline.Sub(arrived) / 4
	}
	limit = min(limit, time.Minute)
	return context.WithDeadline(ctx, arrived.Add(limit))
}

// classify returns the first schema, in matching order, that matches,
// or the catch-all schema (which always exists) if none does.
func (st *state) classify(d Digest) *flowcontrolv1.FlowSchema {
	var catchAll *flowcontrolv1.FlowSchema
	for _, fs := range st.schemas {
		if matchesFlowSchema(d, fs) {
			return fs
		}
		if fs.Name == flowcontrolv1.FlowSchemaNameCatchAll {
			catchAll = fs
		}
	}
	return catchAll
}

// flowHash identifies a flow: the first 8 bytes of SHA-256 of the
// schema's name, a zero byte and the distinguisher, as kube hashes, so
// that a flow lands in the same queues.
func flowHash(schema, distinguisher string) uint64 {
	var buf [128]byte
	b := append(buf[:0], schema...)
	b = append(b, 0)
	b = append(b, distinguisher...)
	sum := sha256.Sum256(b)
	return binary.LittleEndian.Uint64(sum[:8])
}
