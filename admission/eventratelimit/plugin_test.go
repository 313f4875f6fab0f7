package eventratelimit

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/capstan-io/capstan/admission"
)

func event(ns, source string) *admission.Attributes {
	return &admission.Attributes{Operation: admission.Create, Kind: schema.GroupVersionKind{Version: "v1", Kind: "Event"}, Namespace: ns,
		Object: &corev1.Event{Source: corev1.EventSource{Component: source}, InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p"}}}
}

func TestLimits(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Now())
	p, err := newPlugin(&Configuration{Limits: []Limit{{Type: ServerLimitType, QPS: 1, Burst: 3}, {Type: NamespaceLimitType, QPS: 1, Burst: 1},
		{Type: SourceAndObjectLimitType, QPS: 1, Burst: 2, CacheSize: 1}}}, clock)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, step := range []struct {
		a    *admission.Attributes
		want string // "" admitted
	}{
		{event("a", "x"), ""},
		{event("a", "x"), "Too many requests: limit reached on type Namespace for key a"},
		{event("b", "x"), "Too many requests: limit reached on type SourceAndObject for key xPodp"},
		{event("a", "y"), "Too many requests: [limit reached on type Server for key , limit reached on type Namespace for key a]"},
		{event("e", "w"), "Too many requests: limit reached on type Server for key "},
		{&admission.Attributes{Kind: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}}, ""},
	} {
		err := p.Validate(ctx, step.a)
		if step.want == "" {
			if err != nil {
				t.Fatalf("%s: %v", step.a.Namespace, err)
			}
			continue
		}
		if !apierrors.IsTooManyRequests(err) || !strings.Contains(err.Error(), step.want) {
			t.Fatalf("%s: %v, want 429 %q", step.a.Namespace, err, step.want)
		}
	}
	clock.Step(2 * time.Second)
	if err := p.Validate(ctx, event("d", "z")); err != nil {
		t.Errorf("after the buckets refill: %v", err)
	}
}

func TestReadConfiguration(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{"", "limits: Invalid value: null: must not be empty"},
		{"kind: Configuration\napiVersion: eventratelimit.admission.k8s.io/v1alpha1\nlimits:\n- type: Bogus\n  qps: 0\n  burst: 1\n",
			`[limits[0].type: Unsupported value: "Bogus": supported values: "Namespace", "Server", "SourceAndObject", "User", limits[0].qps: Invalid value: 0: must be positive]`},
		{"limits: []\n", "Object 'Kind' is missing"},
	} {
		_, err := readConfiguration([]byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.data, err, tc.want)
		}
	}
}
