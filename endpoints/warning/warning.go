// Package warning carries the Warning headers that storage and strategies
// raise during a request back to the response, as kube's warning recorder
// does: storage sees a context, not the ResponseWriter.
package warning

import (
	"context"
	"net/http"
	"strings"
	"sync"
)

type recorderKey struct{}

// recorder adds each distinct message once to a response's header.
type recorder struct {
	mu     sync.Mutex
	header http.Header
	seen   map[string]bool
}

// WithHeader returns a copy of ctx whose warnings go to header, which must
// be the response's header map while the handler may still add to it.
func WithHeader(ctx context.Context, header http.Header) context.Context {
	return context.WithValue(ctx, recorderKey{}, &recorder{header: header, seen: map[string]bool{}})
}

// Add records msg as a warning of the request ctx belongs to; without a
// recorder (a call from inside the server) it is dropped, as kube does.
func Add(ctx context.Context, msg string) {
	r, ok := ctx.Value(recorderKey{}).(*recorder)
	if !ok || msg == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen[msg] {
		return
	}
	r.seen[msg] = true
	r.header.Add("Warning", Header(msg))
}

// Header is msg as a Warning header value: code 299, no agent, the text
// quoted with its quotes and backslashes escaped (RFC 7234).
func Header(msg string) string {
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(msg)
	return `299 - "` + esc + `"`
}
