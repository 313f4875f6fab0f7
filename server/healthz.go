package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/capstan-io/capstan/metrics"
)

// HealthCheck is one named check of /healthz, /livez or /readyz.
type HealthCheck struct {
	Name  string
	Check func(r *http.Request) error
	// NotLivez leaves the check out of /livez: a failing backend that a
	// restart would not fix (a KMS plugin) must not get the server killed.
	NotLivez bool
	// ReadyzOnly leaves the check out of /healthz and /livez.
	ReadyzOnly bool
}

// checkTimeout bounds a check that talks to a backend.
const checkTimeout = 2 * time.Second

// PingCheck always passes: the server answers.
var PingCheck = HealthCheck{Name: "ping", Check: func(*http.Request) error { return nil }}

// hookCheck fails until a post-start hook has finished, and keeps failing
// with its error if it failed.
type hookCheck struct {
	mu   sync.Mutex // guards err and done
	done bool
	err  error
}

func (h *hookCheck) finish(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.done, h.err = true, err
}

func (h *hookCheck) check(*http.Request) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case !h.done:
		return fmt.Errorf("not finished")
	case h.err != nil:
		return fmt.Errorf("hook failed: %w", h.err)
	}
	return nil
}

// serveChecks serves /<kind> and /<kind>/<check> with kube's output:
// "ok" or a verbose list of [+]/[-] lines, ?exclude= to skip checks.
func serveChecks(kind string, checks func() []HealthCheck) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		all := checks()
		if name := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/"+kind), "/"); name != "" {
			serveOneCheck(w, r, all, name)
			return
		}
		excluded := sets.New(r.URL.Query()["exclude"]...)
		var out strings.Builder
		failed := false
		for _, c := range all {
			if excluded.Has(c.Name) {
				excluded.Delete(c.Name)
				fmt.Fprintf(&out, "[+]%s excluded: ok\n", c.Name)
				continue
			}
			err := runCheck(r, c)
			metrics.HealthCheck(kind, c.Name, err == nil)
			if err != nil {
				failed = true
				fmt.Fprintf(&out, "[-]%s failed: reason withheld\n", c.Name)
			} else {
				fmt.Fprintf(&out, "[+]%s ok\n", c.Name)
			}
		}
		if excluded.Len() > 0 {
			fmt.Fprintf(&out, "warn: some health checks cannot be excluded: no matches for %s\n", formatQuoted(sets.List(excluded)))
		}
		if failed {
			fmt.Fprintf(&out, "%s check failed\n", kind)
			http.Error(w, out.String(), http.StatusInternalServerError)
			return
		}
		if _, verbose := r.URL.Query()["verbose"]; verbose {
			fmt.Fprintf(&out, "%s check passed\n", kind)
			_, _ = w.Write([]byte(out.String()))
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
}

func serveOneCheck(w http.ResponseWriter, r *http.Request, all []HealthCheck, name string) {
	for _, c := range all {
		if c.Name != name {
			continue
		}
		if err := runCheck(r, c); err != nil {
			http.Error(w, fmt.Sprintf("internal server error: %v", err), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
		return
	}
	http.NotFound(w, r)
}

func runCheck(r *http.Request, c HealthCheck) error {
	ctx, cancel := context.WithTimeout(r.Context(), checkTimeout)
	defer cancel()
	return c.Check(r.WithContext(ctx))
}

func formatQuoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ",")
}
