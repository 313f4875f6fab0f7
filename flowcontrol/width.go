package flowcontrol

import (
	"math"
	"net/url"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/flowcontrol/fairqueuing"
	"github.com/capstan-io/capstan/request"
)

// Width estimation parameters, kube's (with its default
// SizeBasedListCostEstimate): a seat per 100kB a list holds in memory at
// once, at most 1MB for lists streamed from the watch cache, and at most
// 100 seats.
const (
	bytesPerSeat      = 100_000
	cacheMaxMemory    = 1_000_000
	maxListSeats      = 100
	unknownObjectSize = 1_500_000
)

// ObjectCounter tells how many objects of a resource are stored and
// their average size in bytes; ok is false when it does not know.
type ObjectCounter interface {
	ObjectStats(group, resource string) (count, averageSize int64, ok bool)
}

// width estimates a request's width. Lists (and watches that start with
// the current state) take a seat per 100kB of objects they load at once;
// writes hold seats for the watchers they notify; everything else takes
// one seat. Exempt requests are estimated too, as kube does: they never
// wait, but their seats are the exempt level's demand, which borrowing
// gives it from the others. For a write it also returns the watchers
// counted, -1 for other requests (and for service account tokens, which
// make no event: kube does not count their watchers either).
func (c *Controller) width(info *request.Info, rawQuery string, l *level) (w fairqueuing.Width, watchers int) {
	one := fairqueuing.Width{InitialSeats: 1}
	if info == nil || !info.IsResourceRequest {
		return one, -1
	}
	switch info.Verb {
	case "create", "update", "patch", "delete":
		if info.Resource == "serviceaccounts" && info.Subresource == "token" {
			return one, -1
		}
		watchers = c.watches.interested(info)
		return writeWidth(watchers, l.maxSeats), watchers
	case "list", "watch":
		return fairqueuing.Width{InitialSeats: c.seats(info, rawQuery, l)}, -1
	}
	return one, -1
}

// Kube's estimate of the work of a write's events: each watcher that may
// be interested costs a tenth of a seat for 5ms, after the write, on at
// most 10 seats (fewer when the level bounds its widest request).
const (
	watchesPerSeat     = 10
	eventCost          = 5 * time.Millisecond
	maxWriteFinalSeats = 10
)

// writeWidth is the width of a write that watchers interested in: one
// seat to run, then final seats lingering to account for its events.
// Under watchesPerSeat watchers it is not charged at all, as in kube.
func writeWidth(watchers, levelMaxSeats int) fairqueuing.Width {
	w := fairqueuing.Width{InitialSeats: 1}
	if watchers < watchesPerSeat {
		return w
	}
	limit := maxWriteFinalSeats
	if levelMaxSeats > 0 && levelMaxSeats < limit {
		limit = levelMaxSeats
	}
	seats := (watchers + watchesPerSeat - 1) / watchesPerSeat
	work := time.Duration(seats) * eventCost
	w.FinalSeats = min(seats, limit)
	w.AdditionalLatency = work / time.Duration(w.FinalSeats)
	return w
}

// seats is the width of a list, or of a watch that starts with a list.
func (c *Controller) seats(info *request.Info, rawQuery string, l *level) int {
	if c.cfg.ObjectCounts == nil {
		return 1
	}
	query, err := url.ParseQuery(rawQuery)
	if err != nil {
		return 1 // the handler rejects it
	}
	switch info.Verb {
	case "list":
	case "watch":
		// Only watches that send the current state first cost more.
		rv := query.Get("resourceVersion")
		if query.Get("sendInitialEvents") != "true" && rv != "" && rv != "0" {
			return 1
		}
	default:
		return 1
	}
	limit := maxListSeats
	if l.maxSeats > 0 && l.maxSeats < limit {
		limit = l.maxSeats
	}
	count, size, ok := c.cfg.ObjectCounts.ObjectStats(info.APIGroup, info.Resource)
	if !ok {
		return 1 // kube: unknown resources cost the minimum
	}
	return max(1, min(limit, listSeats(info, query, count, size)))
}

// listSeats is kube's size-based estimate of a list's memory.
func listSeats(info *request.Info, query url.Values, count, size int64) int {
	if size <= 0 && count != 0 {
		size = unknownObjectSize
	}
	limited := count
	if n, err := strconv.ParseInt(query.Get("limit"), 10, 64); err == nil && n > 0 && n < limited {
		limited = n
	}
	fromCache := info.Verb == "watch" || !listFromStorage(query)
	var loaded int64
	switch {
	case info.Name != "":
		loaded = 1
	case fromCache:
		loaded = limited
	case query.Get("fieldSelector") != "" || query.Get("labelSelector") != "":
		loaded = max(limited, count/2)
	default:
		loaded = limited
	}
	memory := loaded * size
	if fromCache {
		memory = min(memory, cacheMaxMemory)
	}
	return int(math.Ceil(float64(memory) / bytesPerSeat))
}

// listFromStorage tells the lists the watch cache does not serve (with
// kube's rules and no cache snapshots): exact resource versions, pages
// after the first, and limited lists at a given resource version.
func listFromStorage(query url.Values) bool {
	rv := query.Get("resourceVersion")
	switch metav1.ResourceVersionMatch(query.Get("resourceVersionMatch")) {
	case metav1.ResourceVersionMatchExact:
		return true
	case metav1.ResourceVersionMatchNotOlderThan:
		return false
	case "":
		if query.Get("continue") != "" {
			return true
		}
		limit, _ := strconv.ParseInt(query.Get("limit"), 10, 64)
		return limit > 0 && rv != "" && rv != "0"
	}
	return true
}
