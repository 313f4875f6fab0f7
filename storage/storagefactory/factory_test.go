package storagefactory

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestCached: a resource gets a watch cache unless the cache is off
// (--watch-cache=false), its spec asks for none, it is events, or
// --watch-cache-sizes gives it size 0 (CacheOff).
func TestCached(t *testing.T) {
	pods, deployments := schema.GroupResource{Resource: "pods"}, schema.GroupResource{Group: "apps", Resource: "deployments"}
	for _, tc := range []struct {
		name string
		f    *Factory
		spec Spec
		want bool
	}{
		{"on", &Factory{WatchCache: true}, Spec{Resource: pods}, true},
		{"--watch-cache=false", &Factory{}, Spec{Resource: pods}, false},
		{"spec without cache", &Factory{WatchCache: true}, Spec{Resource: pods, NoWatchCache: true}, false},
		{"events", &Factory{WatchCache: true}, Spec{Resource: schema.GroupResource{Resource: "events"}}, false},
		{"size 0", &Factory{WatchCache: true, CacheOff: map[schema.GroupResource]bool{pods: true}}, Spec{Resource: pods}, false},
		{"size 0 of another", &Factory{WatchCache: true, CacheOff: map[schema.GroupResource]bool{pods: true}}, Spec{Resource: deployments}, true},
	} {
		if got := tc.f.cached(tc.spec); got != tc.want {
			t.Errorf("%s: cached %v, want %v", tc.name, got, tc.want)
		}
	}
}
