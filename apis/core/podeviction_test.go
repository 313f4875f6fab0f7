package core

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/request"
)

func eviction(name string, opts *metav1.DeleteOptions) *policyv1.Eviction {
	return &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name}, DeleteOptions: opts}
}

// runningPod stores a pod bound to a node and reported Running.
func runningPod(t *testing.T, ctx context.Context, s *registry.Store, name string) *corev1.Pod {
	t.Helper()
	createPod(t, ctx, s, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}})
	pod := getPod(t, ctx, s, name)
	pod.Status.Phase = corev1.PodRunning
	out, _, err := s.WithStrategy(PodStatusStrategy{}).Update(ctx, name, updateTo(pod), nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out.(*corev1.Pod)
}

func TestEvictionDeletesAtOnce(t *testing.T) {
	store := newPodStore(t)
	ctx := request.WithNamespace(context.Background(), "ns")
	r := NewEvictionREST(store, nil)
	createPod(t, ctx, store, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pending"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}})
	runningPod(t, ctx, store, "zero")

	for _, ev := range []*policyv1.Eviction{eviction("pending", nil), eviction("zero", &metav1.DeleteOptions{GracePeriodSeconds: ptr[int64](0)})} {
		out, err := r.Create(ctx, ev.Name, ev, nil, &metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("%s: %v", ev.Name, err)
		}
		if st, ok := out.(*metav1.Status); !ok || st.Status != metav1.StatusSuccess {
			t.Errorf("%s: answer %#v", ev.Name, out)
		}
		if _, err := store.Get(ctx, ev.Name, &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: still there after eviction: %v", ev.Name, err)
		}
	}
}

func TestEvictionGraceful(t *testing.T) {
	store := newPodStore(t)
	ctx := request.WithNamespace(context.Background(), "ns")
	r := NewEvictionREST(store, nil)
	runningPod(t, ctx, store, "web")

	dry := &metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	if _, err := r.Create(ctx, "web", eviction("web", nil), nil, dry); err != nil {
		t.Fatal(err)
	}
	if pod := getPod(t, ctx, store, "web"); pod.DeletionTimestamp != nil || podCondition(&pod.Status, corev1.DisruptionTarget) != nil {
		t.Fatalf("dry run changed the pod: %+v", pod)
	}

	if _, err := r.Create(ctx, "web", eviction("web", nil), nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := getPod(t, ctx, store, "web")
	c := podCondition(&pod.Status, corev1.DisruptionTarget)
	switch {
	case pod.DeletionTimestamp == nil || pod.DeletionGracePeriodSeconds == nil || *pod.DeletionGracePeriodSeconds != 30:
		t.Errorf("not marked for deletion with the pod's grace period: %v %v", pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds)
	case c == nil || c.Status != corev1.ConditionTrue || c.Reason != "EvictionByEvictionAPI" || c.Message != "Eviction API: evicting":
		t.Errorf("DisruptionTarget condition = %+v", c)
	}
}

func TestEvictionRefused(t *testing.T) {
	store := newPodStore(t)
	ctx := request.WithNamespace(context.Background(), "ns")
	r := NewEvictionREST(store, nil)
	pod := runningPod(t, ctx, store, "web")
	stale := "1"
	if pod.ResourceVersion == stale {
		stale = "2"
	}
	tests := []struct {
		name  string
		url   string
		ev    *policyv1.Eviction
		opts  *metav1.CreateOptions
		check func(error) bool
	}{
		{"name mismatch", "web", eviction("other", nil), &metav1.CreateOptions{}, apierrors.IsBadRequest},
		{"missing pod", "absent", eviction("absent", nil), &metav1.CreateOptions{}, apierrors.IsNotFound},
		{"cluster-breaking option", "web", eviction("web", &metav1.DeleteOptions{IgnoreStoreReadErrorWithClusterBreakingPotential: ptr(true)}),
			&metav1.CreateOptions{}, apierrors.IsInvalid},
		{"dry-run disagreement", "web", eviction("web", &metav1.DeleteOptions{DryRun: []string{"All"}}),
			&metav1.CreateOptions{DryRun: []string{"Other"}}, apierrors.IsBadRequest},
		{"stale resourceVersion", "web", eviction("web", &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &stale}}),
			&metav1.CreateOptions{}, apierrors.IsConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.Create(ctx, tt.url, tt.ev, nil, tt.opts)
			if !tt.check(err) {
				t.Errorf("error = %v", err)
			}
		})
	}
	if got := getPod(t, ctx, store, "web"); got.DeletionTimestamp != nil {
		t.Error("a refused eviction deleted the pod")
	}
}
