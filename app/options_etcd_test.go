package app

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestParseServersOverrides(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []serversOverride
		bad  bool
	}{
		{in: nil},
		{in: []string{"/events#http://a:1;http://b:2"}, want: []serversOverride{{schema.GroupResource{Resource: "events"}, []string{"http://a:1", "http://b:2"}}}},
		{in: []string{"apps/deployments#https://c:3"}, want: []serversOverride{{schema.GroupResource{Group: "apps", Resource: "deployments"}, []string{"https://c:3"}}}},
		{in: []string{"events#http://a:1"}, bad: true},
		{in: []string{"/events"}, bad: true},
		{in: []string{"/events#"}, bad: true},
		{in: []string{"/events#http://a:1;"}, bad: true},
		{in: []string{"a/b/c#http://a:1"}, bad: true},
	} {
		got, err := parseServersOverrides(tc.in)
		if (err != nil) != tc.bad || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

func TestParseWatchCacheSizes(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want map[schema.GroupResource]bool
		bad  bool
	}{
		{in: nil, want: map[schema.GroupResource]bool{}},
		{in: []string{"pods#0", "deployments.apps#100"}, want: map[schema.GroupResource]bool{{Resource: "pods"}: false, {Group: "apps", Resource: "deployments"}: true}},
		{in: []string{"pods"}, bad: true},
		{in: []string{"pods#x"}, bad: true},
		{in: []string{"pods#-1"}, bad: true},
	} {
		got, err := parseWatchCacheSizes(tc.in)
		if (err != nil) != tc.bad || (!tc.bad && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("%q: %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
}
