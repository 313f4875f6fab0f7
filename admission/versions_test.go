package admission

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestEquivalent(t *testing.T) {
	v := func(group, version, resource string) Version {
		return Version{Resource: schema.GroupVersionResource{Group: group, Version: version, Resource: resource},
			Kind: schema.GroupVersionKind{Group: group, Version: version, Kind: "K" + version}}
	}
	hpaV1, hpaV2 := v("autoscaling", "v1", "hpas"), v("autoscaling", "v2", "hpas")
	coreEv, evEv := v("", "v1", "events"), v("events.k8s.io", "v1", "events")
	// A rule is the group and version it selects.
	rule := func(r *Version, a *Attributes) bool {
		return r.Resource.GroupVersion() == a.Resource.GroupVersion()
	}
	for _, tc := range []struct {
		name      string
		requested Version
		versions  []Version
		rules     []Version
		want      Version
		ok        bool
	}{
		{"no other versions", hpaV1, nil, []Version{hpaV2}, Version{}, false},
		{"the other version", hpaV1, []Version{hpaV2, hpaV1}, []Version{hpaV2}, hpaV2, true},
		{"the requested version is not equivalent to itself", hpaV1, []Version{hpaV1, hpaV2}, []Version{hpaV1}, Version{}, false},
		{"another group", coreEv, []Version{coreEv, evEv}, []Version{evEv}, evEv, true},
		{"rules in order", coreEv, []Version{coreEv, evEv, hpaV2}, []Version{hpaV2, evEv}, hpaV2, true},
		{"no rule selects", coreEv, []Version{coreEv, evEv}, []Version{hpaV1}, Version{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &Attributes{Resource: tc.requested.Resource, Kind: tc.requested.Kind}
			if tc.versions != nil {
				a.Versions = &Versions{List: tc.versions}
			}
			got, ok := Equivalent(a, tc.rules, rule)
			if got != tc.want || ok != tc.ok {
				t.Errorf("got %v %v, want %v %v", got, ok, tc.want, tc.ok)
			}
			if a.Resource != tc.requested.Resource {
				t.Errorf("attributes changed: %v", a.Resource)
			}
		})
	}
}
