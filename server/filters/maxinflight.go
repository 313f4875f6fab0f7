package filters

import (
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/request"
)

// mutatingVerbs are the verbs limited by --max-mutating-requests-inflight.
var mutatingVerbs = map[string]bool{"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true}

// WithMaxInFlightLimit bounds how many requests run at once: read-only ones
// by readOnly, writes by mutating (0 means no bound). A request over the
// bound gets 429 with Retry-After, as kube's --max-requests-inflight.
// Watches and other long-running requests, and system:masters (the
// server's own client among them), are not counted.
func WithMaxInFlightLimit(readOnly, mutating int) Filter {
	readSlots, writeSlots := slots(readOnly), slots(mutating)
	return func(h http.Handler) http.Handler {
		if readSlots == nil && writeSlots == nil {
			return h
		}
		metrics.SetInflightLimits(readOnly, mutating, 1)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			info, _ := request.InfoFrom(r.Context())
			if LongRunning(info) || privileged(r) {
				h.ServeHTTP(w, r)
				return
			}
			c := readSlots
			if info != nil && mutatingVerbs[info.Verb] {
				c = writeSlots
			}
			if c == nil {
				h.ServeHTTP(w, r)
				return
			}
			select {
			case c <- struct{}{}:
				defer func() { <-c }()
				h.ServeHTTP(w, r)
			default:
				metrics.Terminated(r.Context(), http.StatusTooManyRequests)
				w.Header().Set("Retry-After", "1")
				writeStatusObject(w, &metav1.Status{
					Status: metav1.StatusFailure, Code: http.StatusTooManyRequests, Reason: metav1.StatusReasonTooManyRequests,
					Message: "Too many requests, please try again later.",
					Details: &metav1.StatusDetails{RetryAfterSeconds: 1},
				})
			}
		})
	}
}

func slots(n int) chan struct{} {
	if n <= 0 {
		return nil
	}
	return make(chan struct{}, n)
}

func privileged(r *http.Request) bool {
	u, ok := authn.UserFrom(r.Context())
	if !ok {
		return false
	}
	for _, g := range u.Groups {
		if g == "system:masters" {
			return true
		}
	}
	return false
}
