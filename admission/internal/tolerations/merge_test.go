package tolerations

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"
)

func TestMerge(t *testing.T) {
	exists := corev1.Toleration{Key: "a", Operator: corev1.TolerationOpExists}
	equal := corev1.Toleration{Key: "a", Operator: corev1.TolerationOpEqual, Value: "v", Effect: corev1.TaintEffectNoSchedule}
	all := corev1.Toleration{Operator: corev1.TolerationOpExists}
	short := corev1.Toleration{Key: "b", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](10)}
	long := corev1.Toleration{Key: "b", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](20)}
	for _, tc := range []struct {
		name          string
		first, second []corev1.Toleration
		want          []corev1.Toleration
	}{
		{"disjoint", []corev1.Toleration{equal}, []corev1.Toleration{short}, []corev1.Toleration{equal, short}},
		{"exists covers equal", []corev1.Toleration{equal}, []corev1.Toleration{exists}, []corev1.Toleration{exists}},
		{"duplicates kept once", []corev1.Toleration{equal}, []corev1.Toleration{equal}, []corev1.Toleration{equal}},
		{"longer covers shorter", []corev1.Toleration{short}, []corev1.Toleration{long}, []corev1.Toleration{long}},
		{"match-all covers all", []corev1.Toleration{equal, short}, []corev1.Toleration{all}, []corev1.Toleration{all}},
	} {
		if got := Merge(tc.first, tc.second); !equality.Semantic.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestWhitelisted(t *testing.T) {
	a := corev1.Toleration{Key: "a", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	aEqual := corev1.Toleration{Key: "a", Operator: corev1.TolerationOpEqual, Value: "v", Effect: corev1.TaintEffectNoSchedule}
	b := corev1.Toleration{Key: "b", Operator: corev1.TolerationOpExists}
	anyNoExecute := corev1.Toleration{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}
	for _, tc := range []struct {
		name                   string
		tolerations, whitelist []corev1.Toleration
		want                   bool
	}{
		{"empty whitelist allows any", []corev1.Toleration{a, b}, nil, true},
		{"no tolerations", nil, []corev1.Toleration{a}, true},
		{"covered by a wider one", []corev1.Toleration{aEqual}, []corev1.Toleration{a}, true},
		{"one not covered", []corev1.Toleration{a, b}, []corev1.Toleration{a, anyNoExecute}, false},
		{"effect differs", []corev1.Toleration{{Key: "c", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}, []corev1.Toleration{anyNoExecute}, false},
	} {
		if got := Whitelisted(tc.tolerations, tc.whitelist); got != tc.want {
			t.Errorf("%s: Whitelisted = %v, want %v", tc.name, got, tc.want)
		}
	}
}
