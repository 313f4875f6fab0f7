package filters

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/flowcontrol"
	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/request"
	"github.com/capstan-io/capstan/storage"
)

// WithPriorityAndFairness admits requests through API Priority and
// Fairness: each is classified by the FlowSchemas into a priority level
// and waits there for its seats, or gets 429 with Retry-After when its
// queue is full or it waited a quarter of its time. Long-running requests
// other than watches are not limited; a watch holds its seats until its
// initial events are sent, and is counted while it runs so that writes
// are charged for the events they cause. Responses name the schema and
// level matched.
func WithPriorityAndFairness(fc *flowcontrol.Controller) Filter {
	return func(h http.Handler) http.Handler {
		if fc == nil {
			return h
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			arrived := time.Now()
			ctx := r.Context()
			info, _ := request.InfoFrom(ctx)
			user, ok := authn.UserFrom(ctx)
			if info == nil || !ok {
				// The chain sets both before this filter; never let a
				// request through unaccounted.
				writeStatus(w, http.StatusInternalServerError, "InternalError", "Internal Server Error: no request info or user")
				return
			}
			watch := info.Verb == "watch"
			if LongRunning(info) && !watch {
				h.ServeHTTP(w, r)
				return
			}
			queued := metrics.Queued(mutatingVerbs[info.Verb])
			a := fc.Start(ctx, arrived, flowcontrol.Digest{Info: info, User: user}, r.URL.RawQuery)
			queued()
			metrics.Waited(ctx, time.Since(arrived))
			header := w.Header()
			header[priorityLevelUIDKey] = []string{string(a.PriorityLevel.UID)}
			header[flowSchemaUIDKey] = []string{string(a.FlowSchema.UID)}
			if !a.Admitted() {
				metrics.Terminated(ctx, http.StatusTooManyRequests)
				tooManyRequests(w, fc.RetryAfter(a))
				return
			}
			executed := metrics.FlowExecuting(a.PriorityLevel.Name, a.FlowSchema.Name, a.Width.Seats(), arrived)
			if !watch {
				defer executed()
				defer a.Finish()
				h.ServeHTTP(w, r)
				return
			}
			defer fc.RegisterWatch(info, r.URL.RawQuery)()
			var once sync.Once
			release := func() { once.Do(func() { a.Finish(); executed() }) }
			defer release()
			h.ServeHTTP(w, r.WithContext(storage.WithWatchInitialized(ctx, release)))
		})
	}
}

// The keys of the response headers naming the schema and level matched,
// canonical once: Header.Set canonicalizes a key on every call, and
// these are not canonical.
var (
	priorityLevelUIDKey = http.CanonicalHeaderKey(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID)
	flowSchemaUIDKey    = http.CanonicalHeaderKey(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID)
)

// tooManyRequests is kube's answer to a request APF turned away: plain
// text, not a Status (client-go makes a TooManyRequests error of it).
func tooManyRequests(w http.ResponseWriter, retryAfter int64) {
	w.Header().Set("Retry-After", strconv.FormatInt(retryAfter, 10))
	http.Error(w, "Too many requests, please try again later.", http.StatusTooManyRequests)
}
