package core

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/request"
)

// memBudgets keeps budgets in memory with kube's optimistic concurrency;
// conflicts, when set, fails that many status updates first.
type memBudgets struct {
	mu        sync.Mutex // guards the fields below
	items     map[string]*policyv1.PodDisruptionBudget
	rv        int
	conflicts int
}

func newMemBudgets(pdbs ...*policyv1.PodDisruptionBudget) *memBudgets {
	b := &memBudgets{items: map[string]*policyv1.PodDisruptionBudget{}}
	for _, p := range pdbs {
		b.rv++
		p.ResourceVersion = strconv.Itoa(b.rv)
		b.items[p.Name] = p
	}
	return b
}

func (b *memBudgets) List(_ context.Context, ns string) ([]policyv1.PodDisruptionBudget, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []policyv1.PodDisruptionBudget
	for _, p := range b.items {
		if p.Namespace == ns {
			out = append(out, *p.DeepCopy())
		}
	}
	return out, nil
}

func (b *memBudgets) Get(_ context.Context, _, name string) (*policyv1.PodDisruptionBudget, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.items[name].DeepCopy(), nil
}

func (b *memBudgets) UpdateStatus(_ context.Context, pdb *policyv1.PodDisruptionBudget) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	cur := b.items[pdb.Name]
	if b.conflicts > 0 || cur.ResourceVersion != pdb.ResourceVersion {
		b.conflicts--
		b.rv++
		cur.ResourceVersion = strconv.Itoa(b.rv)
		return apierrors.NewConflict(schema.GroupResource{Group: "policy", Resource: "poddisruptionbudgets"}, pdb.Name, nil)
	}
	b.rv++
	cur.Status = pdb.Status
	cur.ResourceVersion = strconv.Itoa(b.rv)
	return nil
}

func budget(name string, allowed int32) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Generation: 1},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: allowed,
			CurrentHealthy: 2, DesiredHealthy: 2 - allowed, ExpectedPods: 2},
	}
}

// webPod stores a running pod labelled app=web, ready or not.
func webPod(t *testing.T, ctx context.Context, s *registry.Store, name string, ready bool) {
	t.Helper()
	createPod(t, ctx, s, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}})
	pod := getPod(t, ctx, s, name)
	pod.Status.Phase = corev1.PodRunning
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
	if _, _, err := s.WithStrategy(PodStatusStrategy{}).Update(ctx, name, updateTo(pod), nil, nil, false, &metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func evictErr(t *testing.T, r *EvictionREST, ctx context.Context, name string) error {
	t.Helper()
	_, err := r.Create(ctx, name, eviction(name, &metav1.DeleteOptions{GracePeriodSeconds: ptr[int64](0)}), nil, &metav1.CreateOptions{})
	return err
}

func gone(t *testing.T, ctx context.Context, s *registry.Store, name string) bool {
	t.Helper()
	_, err := s.Get(ctx, name, &metav1.GetOptions{})
	return apierrors.IsNotFound(err)
}

func TestEvictionBudgetRefuses(t *testing.T) {
	store := newPodStore(t)
	ctx := request.WithNamespace(context.Background(), "ns")
	webPod(t, ctx, store, "web", true)
	stale := budget("stale", 1)
	stale.Generation = 2
	for _, tt := range []struct {
		name  string
		b     *memBudgets
		code  int32
		cause string
	}{
		{"no disruption allowed", newMemBudgets(budget("pdb", 0)), http.StatusTooManyRequests, "The disruption budget pdb needs 2 healthy pods and has 2 currently"},
		{"budget not observed yet", newMemBudgets(stale), http.StatusTooManyRequests, "The disruption budget stale is still being processed by the server."},
		{"two budgets", newMemBudgets(budget("a", 1), budget("b", 1)), http.StatusInternalServerError, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := evictErr(t, NewEvictionREST(store, tt.b), ctx, "web")
			st, ok := err.(apierrors.APIStatus)
			if !ok || st.Status().Code != tt.code {
				t.Fatalf("error = %v, want %d", err, tt.code)
			}
			if tt.code == http.StatusTooManyRequests {
				causes := st.Status().Details.Causes
				if err.Error() != budgetViolationMsg || len(causes) != 1 || causes[0].Type != policyv1.DisruptionBudgetCause || causes[0].Message != tt.cause {
					t.Errorf("429 = %v, causes %+v", err, causes)
				}
			}
			if gone(t, ctx, store, "web") {
				t.Fatal("a refused eviction deleted the pod")
			}
		})
	}
}

func TestEvictionBudgetAllows(t *testing.T) {
	store := newPodStore(t)
	ctx := request.WithNamespace(context.Background(), "ns")
	webPod(t, ctx, store, "web", true)
	budgets := newMemBudgets(budget("pdb", 1))
	budgets.conflicts = 1 // the first write loses a race and is retried
	if err := evictErr(t, NewEvictionREST(store, budgets), ctx, "web"); err != nil {
		t.Fatal(err)
	}
	if !gone(t, ctx, store, "web") {
		t.Fatal("pod still there")
	}
	p, _ := budgets.Get(ctx, "ns", "pdb")
	c := p.Status.Conditions
	if p.Status.DisruptionsAllowed != 0 || p.Status.DisruptedPods["web"].Time.IsZero() || len(c) != 1 ||
		c[0].Status != metav1.ConditionFalse || c[0].Reason != policyv1.InsufficientPodsReason {
		t.Fatalf("budget after eviction: %+v", p.Status)
	}

	// A dry run decrements nothing.
	webPod(t, ctx, store, "web2", true)
	dryBudgets := newMemBudgets(budget("pdb", 1))
	dry := &metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	if _, err := NewEvictionREST(store, dryBudgets).Create(ctx, "web2", eviction("web2", nil), nil, dry); err != nil {
		t.Fatal(err)
	}
	if p, _ := dryBudgets.Get(ctx, "ns", "pdb"); p.Status.DisruptionsAllowed != 1 || gone(t, ctx, store, "web2") {
		t.Fatalf("dry run changed the budget or the pod: %+v", p.Status)
	}
}

func TestEvictionBudgetUnreadyAndUnselected(t *testing.T) {
	store := newPodStore(t)
	ctx := request.WithNamespace(context.Background(), "ns")
	// An unready pod of a budget that has its healthy pods goes without
	// taking a disruption.
	webPod(t, ctx, store, "sick", false)
	healthy := budget("pdb", 0)
	budgets := newMemBudgets(healthy)
	if err := evictErr(t, NewEvictionREST(store, budgets), ctx, "sick"); err != nil || !gone(t, ctx, store, "sick") {
		t.Fatalf("unready pod: %v", err)
	}
	// Another budget's selector: no budget applies.
	createPod(t, ctx, store, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "other", Labels: map[string]string{"app": "db"}},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}})
	other := getPod(t, ctx, store, "other")
	other.Status.Phase = corev1.PodRunning
	if _, _, err := store.WithStrategy(PodStatusStrategy{}).Update(ctx, "other", updateTo(other), nil, nil, false, &metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := evictErr(t, NewEvictionREST(store, budgets), ctx, "other"); err != nil || !gone(t, ctx, store, "other") {
		t.Fatalf("unselected pod: %v", err)
	}
	// An unready pod of a budget short of healthy pods needs a disruption.
	webPod(t, ctx, store, "sick2", false)
	short := budget("pdb", 0)
	short.Status.CurrentHealthy = 1
	err := evictErr(t, NewEvictionREST(store, newMemBudgets(short)), ctx, "sick2")
	if !apierrors.IsTooManyRequests(err) || !strings.Contains(err.(apierrors.APIStatus).Status().Details.Causes[0].Message, "has 1 currently") {
		t.Fatalf("unready pod of a short budget: %v", err)
	}
}
