package namespace

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

func TestRemoveFinalizer(t *testing.T) {
	tests := []struct {
		name string
		in   []corev1.FinalizerName
		want []corev1.FinalizerName
	}{
		{"nil", nil, []corev1.FinalizerName{}},
		{"only kubernetes", []corev1.FinalizerName{"kubernetes"}, []corev1.FinalizerName{}},
		{"others kept sorted", []corev1.FinalizerName{"z.io/b", "kubernetes", "a.io/a"}, []corev1.FinalizerName{"a.io/a", "z.io/b"}},
		{"duplicates", []corev1.FinalizerName{"kubernetes", "a.io/a", "kubernetes", "a.io/a"}, []corev1.FinalizerName{"a.io/a"}},
		{"absent", []corev1.FinalizerName{"a.io/a"}, []corev1.FinalizerName{"a.io/a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := removeFinalizer(tt.in, corev1.FinalizerKubernetes)
			if got == nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("removeFinalizer(%v) = %#v, want %#v", tt.in, got, tt.want)
			}
		})
	}
}

func TestDeletableResources(t *testing.T) {
	all := []string{"create", "delete", "deletecollection", "get", "list", "watch"}
	lists := []*metav1.APIResourceList{
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", Verbs: all},
		}},
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "configmaps", Verbs: all},
			{Name: "pods", Verbs: all},
			{Name: "bindings", Verbs: []string{"create"}},
			{Name: "listonly", Verbs: []string{"delete", "list"}},
			{Name: "blind", Verbs: []string{"delete"}},
		}},
		nil,
		{GroupVersion: "a/b/c", APIResources: []metav1.APIResource{{Name: "x", Verbs: all}}},
	}
	got, err := deletableResources(lists)
	if err == nil {
		t.Error("unparsable group version not reported")
	}
	v1 := func(r string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Version: "v1", Resource: r}
	}
	want := []resource{
		{gvr: podsGVR, list: true, deleteCollection: true},
		{gvr: v1("blind")},
		{gvr: v1("configmaps"), list: true, deleteCollection: true},
		{gvr: v1("listonly"), list: true},
		{gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, list: true, deleteCollection: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("deletableResources =\n%+v\nwant\n%+v", got, want)
	}
}

func TestReportConditions(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	tests := []struct {
		name string
		rep  *report
		// true conditions and their messages; every other type is False.
		want map[corev1.NamespaceConditionType]string
	}{
		{"all well", newReport(), nil},
		{"content remaining", &report{
			remaining:  map[schema.GroupVersionResource]int{gvr: 2, podsGVR: 1, {Resource: "zero"}: 0},
			finalizers: map[string]int{"example.com/f": 2, "b.io/g": 1},
		}, map[corev1.NamespaceConditionType]string{
			corev1.NamespaceContentRemaining:    "Some resources are remaining: deployments.apps has 2 resource instances, pods. has 1 resource instances",
			corev1.NamespaceFinalizersRemaining: "Some content in the namespace has finalizers remaining: b.io/g in 1 resource instances, example.com/f in 2 resource instances",
		}},
		{"failures", &report{
			discoveryErr: &discovery.ErrGroupDiscoveryFailed{Groups: map[schema.GroupVersion]error{{Group: "x", Version: "v1"}: errors.New("down")}},
			parseErr:     errors.New("bad gv"),
			contentErrs:  []error{errors.New("b failed"), errors.New("a failed")},
		}, map[corev1.NamespaceConditionType]string{
			corev1.NamespaceDeletionDiscoveryFailure: "Discovery failed for some groups, 1 failing: unable to retrieve the complete list of server APIs: x/v1: down",
			corev1.NamespaceDeletionGVParsingFailure: "bad gv",
			corev1.NamespaceDeletionContentFailure:   "Failed to delete all resource types, 2 remaining: a failed, b failed",
		}},
		{"plain discovery error", &report{discoveryErr: errors.New("timeout")},
			map[corev1.NamespaceConditionType]string{corev1.NamespaceDeletionDiscoveryFailure: "timeout"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conds := tt.rep.conditions()
			if len(conds) != len(conditionTypes) {
				t.Fatalf("got %d conditions, want %d", len(conds), len(conditionTypes))
			}
			for i, c := range conds {
				if c.Type != conditionTypes[i] {
					t.Errorf("condition %d is %s, want %s", i, c.Type, conditionTypes[i])
				}
				msg, failed := tt.want[c.Type]
				switch {
				case failed && (c.Status != corev1.ConditionTrue || c.Message != msg):
					t.Errorf("%s = %s %q, want True %q", c.Type, c.Status, c.Message, msg)
				case !failed && (c.Status != corev1.ConditionFalse || c.Message != okConditions[c.Type][1] || c.Reason != okConditions[c.Type][0]):
					t.Errorf("%s = %s %s %q, want the ok condition", c.Type, c.Status, c.Reason, c.Message)
				}
			}
		})
	}
}

func TestUpdateConditions(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	cond := func(typ corev1.NamespaceConditionType, status corev1.ConditionStatus, msg string, at metav1.Time) corev1.NamespaceCondition {
		return corev1.NamespaceCondition{Type: typ, Status: status, Reason: "R", Message: msg, LastTransitionTime: at}
	}
	remaining := corev1.NamespaceContentRemaining
	other := corev1.NamespaceConditionType("Other")
	tests := []struct {
		name    string
		have    []corev1.NamespaceCondition
		set     []corev1.NamespaceCondition
		want    []corev1.NamespaceCondition
		changed bool
	}{
		{"added", nil, []corev1.NamespaceCondition{cond(remaining, "True", "m", metav1.Time{})},
			[]corev1.NamespaceCondition{cond(remaining, "True", "m", t1)}, true},
		{"unchanged", []corev1.NamespaceCondition{cond(remaining, "True", "m", t0)}, []corev1.NamespaceCondition{cond(remaining, "True", "m", metav1.Time{})},
			[]corev1.NamespaceCondition{cond(remaining, "True", "m", t0)}, false},
		{"message only", []corev1.NamespaceCondition{cond(remaining, "True", "m", t0)}, []corev1.NamespaceCondition{cond(remaining, "True", "n", metav1.Time{})},
			[]corev1.NamespaceCondition{cond(remaining, "True", "n", t0)}, true},
		{"transition", []corev1.NamespaceCondition{cond(remaining, "True", "m", t0)}, []corev1.NamespaceCondition{cond(remaining, "False", "m", metav1.Time{})},
			[]corev1.NamespaceCondition{cond(remaining, "False", "m", t1)}, true},
		{"foreign kept", []corev1.NamespaceCondition{cond(other, "True", "x", t0)}, []corev1.NamespaceCondition{cond(remaining, "False", "m", metav1.Time{})},
			[]corev1.NamespaceCondition{cond(other, "True", "x", t0), cond(remaining, "False", "m", t1)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status := &corev1.NamespaceStatus{Conditions: tt.have}
			changed := updateConditions(status, tt.set, t1)
			if changed != tt.changed || !reflect.DeepEqual(status.Conditions, tt.want) {
				t.Errorf("updateConditions = %v %+v\nwant %v %+v", changed, status.Conditions, tt.changed, tt.want)
			}
		})
	}
}

func TestGraceLeft(t *testing.T) {
	tests := []struct {
		grace   int64
		elapsed time.Duration
		want    int64
	}{
		{0, 0, 0},
		{30, 10 * time.Second, 30},
		{30, 30 * time.Second, 0},
		{30, time.Hour, 0},
	}
	for _, tt := range tests {
		if got := graceLeft(tt.grace, tt.elapsed); got != tt.want {
			t.Errorf("graceLeft(%d, %v) = %d, want %d", tt.grace, tt.elapsed, got, tt.want)
		}
	}
}

func TestContentRemainingError(t *testing.T) {
	var err error = fmt.Errorf("wrapped: %w", &contentRemainingError{estimate: 15})
	var remaining *contentRemainingError
	if !errors.As(err, &remaining) || remaining.estimate != 15 {
		t.Errorf("errors.As failed on %v", err)
	}
}
