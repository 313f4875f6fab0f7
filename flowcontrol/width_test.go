package flowcontrol

import (
	"testing"
	"time"

	"github.com/capstan-io/capstan/flowcontrol/fairqueuing"
	"github.com/capstan-io/capstan/request"
)

type fakeCounts map[string][2]int64

func (f fakeCounts) ObjectStats(group, resource string) (int64, int64, bool) {
	s, ok := f[group+"/"+resource]
	return s[0], s[1], ok
}

// TestSeats: kube's size-based estimate of lists (and of watches that
// start with a list): a seat per 100kB loaded at once, lists from the
// watch cache counted up to 1MB, at most 100 seats or the level's
// maximum, at least 1.
func TestSeats(t *testing.T) {
	counts := fakeCounts{
		"/pods":            {800, 1000},
		"/configmaps":      {5000, 1000},
		"/secrets":         {50000, 1000},
		"/events":          {0, 0},
		"apps/nosize":      {10, 0},
		"/serviceaccounts": {3, 200},
	}
	c := NewController(Config{ObjectCounts: counts})
	list := func(group, resource string) *request.Info {
		return &request.Info{IsResourceRequest: true, Verb: "list", APIGroup: group, Resource: resource}
	}
	for _, tc := range []struct {
		name     string
		info     *request.Info
		query    string
		maxSeats int
		exempt   bool
		want     int
	}{
		{name: "get", info: &request.Info{IsResourceRequest: true, Verb: "get", Resource: "pods", Name: "a"}, want: 1},
		{name: "non-resource", info: &request.Info{Verb: "get", Path: "/healthz"}, want: 1},
		{name: "unknown resource", info: list("example.com", "widgets"), want: 1},
		{name: "consistent list from the cache", info: list("", "pods"), want: 8},
		{name: "list at any version from the cache", info: list("", "pods"), query: "resourceVersion=0", want: 8},
		{name: "cache lists count at most 1MB", info: list("", "configmaps"), want: 10},
		{name: "limit without a version is served by the cache", info: list("", "configmaps"), query: "limit=500", want: 5},
		{name: "limit at a version goes to etcd", info: list("", "configmaps"), query: "limit=500&resourceVersion=5", want: 5},
		{name: "continued selective lists read half", info: list("", "configmaps"), query: "limit=500&continue=abc&labelSelector=a%3Db", want: 25},
		{name: "exact lists from etcd are not capped at 1MB", info: list("", "configmaps"), query: "resourceVersion=5&resourceVersionMatch=Exact", want: 50},
		{name: "at most 100 seats", info: list("", "secrets"), query: "resourceVersion=5&resourceVersionMatch=Exact", want: 100},
		{name: "the level's maximum", info: list("", "configmaps"), maxSeats: 3, want: 3},
		{name: "exempt levels are estimated too", info: list("", "configmaps"), exempt: true, want: 10},
		{name: "one named object", info: &request.Info{IsResourceRequest: true, Verb: "list", Resource: "configmaps", Name: "a"}, want: 1},
		{name: "nothing stored", info: list("", "events"), want: 1},
		{name: "unknown size is etcd's largest", info: list("apps", "nosize"), want: 10},
		{name: "small lists take one seat", info: list("", "serviceaccounts"), want: 1},
		{name: "watch from a version", info: &request.Info{IsResourceRequest: true, Verb: "watch", Resource: "pods"}, query: "resourceVersion=100", want: 1},
		{name: "watch from now lists first", info: &request.Info{IsResourceRequest: true, Verb: "watch", Resource: "pods"}, want: 8},
		{name: "watch with initial events", info: &request.Info{IsResourceRequest: true, Verb: "watch", Resource: "pods"},
			query: "resourceVersion=100&sendInitialEvents=true&resourceVersionMatch=NotOlderThan", want: 8},
		{name: "create", info: &request.Info{IsResourceRequest: true, Verb: "create", Resource: "pods"}, want: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if w, _ := c.width(tc.info, tc.query, &level{maxSeats: tc.maxSeats, exempt: tc.exempt}); w.Seats() != tc.want {
				got := w.Seats()
				t.Errorf("seats = %d, want %d", got, tc.want)
			}
		})
	}
	if w, _ := NewController(Config{}).width(list("", "configmaps"), "", &level{}); w.Seats() != 1 {
		got := w.Seats()
		t.Errorf("without counts: %d seats, want 1", got)
	}
}

// TestWriteWidth: kube's estimate of a write's events, a tenth of a seat
// per interested watcher for 5ms, reshaped onto at most 10 seats (or the
// level's maximum) for longer; fewer than 10 watchers cost nothing.
func TestWriteWidth(t *testing.T) {
	for _, tc := range []struct {
		watchers, levelMax int
		want               fairqueuing.Width
	}{
		{watchers: 0, want: fairqueuing.Width{InitialSeats: 1}},
		{watchers: 9, want: fairqueuing.Width{InitialSeats: 1}},
		{watchers: 10, want: fairqueuing.Width{InitialSeats: 1, FinalSeats: 1, AdditionalLatency: 5 * time.Millisecond}},
		{watchers: 25, want: fairqueuing.Width{InitialSeats: 1, FinalSeats: 3, AdditionalLatency: 5 * time.Millisecond}},
		{watchers: 100, want: fairqueuing.Width{InitialSeats: 1, FinalSeats: 10, AdditionalLatency: 5 * time.Millisecond}},
		{watchers: 1000, want: fairqueuing.Width{InitialSeats: 1, FinalSeats: 10, AdditionalLatency: 50 * time.Millisecond}},
		{watchers: 1000, levelMax: 4, want: fairqueuing.Width{InitialSeats: 1, FinalSeats: 4, AdditionalLatency: 125 * time.Millisecond}},
		{watchers: 1000, levelMax: 40, want: fairqueuing.Width{InitialSeats: 1, FinalSeats: 10, AdditionalLatency: 50 * time.Millisecond}},
	} {
		if got := writeWidth(tc.watchers, tc.levelMax); got != tc.want {
			t.Errorf("writeWidth(%d, %d) = %+v, want %+v", tc.watchers, tc.levelMax, got, tc.want)
		}
	}
}

// TestInterestedWatches: a write is charged for the watches of its
// resource across namespaces, in its namespace and of its object, not for
// others', nor for kubelets' watches of their own pods; a watch stops
// counting once forgotten.
func TestInterestedWatches(t *testing.T) {
	c := NewController(Config{})
	watch := func(group, resource, ns, name, query string) func() {
		return c.RegisterWatch(&request.Info{IsResourceRequest: true, Verb: "watch", APIGroup: group,
			Resource: resource, Namespace: ns, Name: name}, query)
	}
	watch("", "configmaps", "", "", "")
	watch("", "configmaps", "a", "", "")
	forget := watch("", "configmaps", "a", "one", "")
	watch("", "configmaps", "b", "", "")
	watch("apps", "configmaps", "a", "", "")
	watch("", "pods", "", "", "fieldSelector=spec.nodeName%3Dnode-1")
	watch("", "pods", "", "", "fieldSelector=spec.nodeName%3D")
	watch("", "pods", "", "", "fieldSelector=metadata.name%3Dx")
	watch("", "pods", "", "", "fieldSelector=%3D%3D%3D")
	write := func(verb, resource, ns, name string) int {
		return c.watches.interested(&request.Info{IsResourceRequest: true, Verb: verb, Resource: resource, Namespace: ns, Name: name})
	}
	for _, tc := range []struct {
		verb, resource, ns, name string
		want                     int
	}{
		{"create", "configmaps", "a", "", 2},
		{"update", "configmaps", "a", "one", 3},
		{"update", "configmaps", "a", "two", 2},
		{"delete", "configmaps", "b", "one", 2},
		{"create", "configmaps", "c", "", 1},
		{"create", "pods", "a", "", 3},
		{"create", "secrets", "a", "", 0},
	} {
		if got := write(tc.verb, tc.resource, tc.ns, tc.name); got != tc.want {
			t.Errorf("%s %s %s/%s: %d watchers, want %d", tc.verb, tc.resource, tc.ns, tc.name, got, tc.want)
		}
	}
	forget()
	forget()
	if got := write("update", "configmaps", "a", "one"); got != 2 {
		t.Errorf("after the watch of one ended: %d watchers, want 2", got)
	}
}

// TestTokenRequestsNotChargedForWatchers: a service account token makes
// no event, so its create is not charged for the service accounts'
// watchers (as kube), while a service account's create is.
func TestTokenRequestsNotChargedForWatchers(t *testing.T) {
	c := NewController(Config{})
	for range 20 {
		c.RegisterWatch(&request.Info{IsResourceRequest: true, Verb: "watch", Resource: "serviceaccounts"}, "")
	}
	create := func(sub string) *request.Info {
		return &request.Info{IsResourceRequest: true, Verb: "create", Resource: "serviceaccounts", Namespace: "a", Name: "sa", Subresource: sub}
	}
	if w, watchers := c.width(create("token"), "", &level{}); w.FinalSeats != 0 || watchers != -1 {
		t.Errorf("token request: %+v, %d watchers counted; want no final seats, none counted", w, watchers)
	}
	if w, watchers := c.width(create(""), "", &level{}); w.FinalSeats != 2 || watchers != 20 {
		t.Errorf("service account create: %+v, %d watchers counted; want 2 final seats, 20 counted", w, watchers)
	}
}
