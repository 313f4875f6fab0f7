package core

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/request"
)

// createPod stores a defaulted copy of pod as a client create would.
func createPod(t *testing.T, ctx context.Context, s *registry.Store, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	pod = pod.DeepCopy()
	DefaultPod(pod)
	out, err := s.Create(ctx, pod, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out.(*corev1.Pod)
}

func getPod(t *testing.T, ctx context.Context, s *registry.Store, name string) *corev1.Pod {
	t.Helper()
	out, err := s.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out.(*corev1.Pod)
}

func binding(name, node string) *corev1.Binding {
	return &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: name}, Target: corev1.ObjectReference{Kind: "Node", Name: node}}
}

func TestBinding(t *testing.T) {
	store := newPodStore(t)
	ctx := request.WithNamespace(context.Background(), "ns")
	r := NewBindingREST(store)
	created := createPod(t, ctx, store, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	})

	b := binding("p", "n1")
	b.Annotations = map[string]string{"scheduled-by": "test", "pod.beta.kubernetes.io/init-containers": "[]"}
	b.Labels = map[string]string{"topology.kubernetes.io/zone": "z1"}
	out, err := r.Create(ctx, "p", b, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st, ok := out.(*metav1.Status); !ok || st.Status != metav1.StatusSuccess {
		t.Errorf("answer = %#v", out)
	}
	pod := getPod(t, ctx, store, "p")
	switch c := podCondition(&pod.Status, corev1.PodScheduled); {
	case pod.Spec.NodeName != "n1":
		t.Errorf("nodeName = %q", pod.Spec.NodeName)
	case c == nil || c.Status != corev1.ConditionTrue:
		t.Errorf("conditions = %+v", pod.Status.Conditions)
	case pod.Annotations["scheduled-by"] != "test" || pod.Annotations["pod.beta.kubernetes.io/init-containers"] != "":
		t.Errorf("annotations = %v", pod.Annotations)
	case pod.Labels["app"] != "web" || pod.Labels["topology.kubernetes.io/zone"] != "z1":
		t.Errorf("labels = %v", pod.Labels)
	case pod.Status.Phase != corev1.PodPending || pod.Generation != created.Generation:
		t.Errorf("status or generation changed: %+v, %d", pod.Status, pod.Generation)
	}

	_, err = r.Create(ctx, "p", binding("p", "n2"), nil, &metav1.CreateOptions{})
	const msg = `Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n1"`
	if !apierrors.IsConflict(err) || err.Error() != msg {
		t.Errorf("second binding: %v, want a conflict %q", err, msg)
	}
}

func TestBindingRefused(t *testing.T) {
	store := newPodStore(t)
	ctx := request.WithNamespace(context.Background(), "ns")
	r := NewBindingREST(store)
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}
	createPod(t, ctx, store, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: spec})
	gated := spec.DeepCopy()
	gated.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/gate"}}
	createPod(t, ctx, store, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "gated"}, Spec: *gated})

	wrongUID := binding("p", "n1")
	wrongUID.UID = "nope"
	dryRun := &metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	tests := []struct {
		name  string
		url   string
		b     *corev1.Binding
		opts  *metav1.CreateOptions
		check func(error) bool
	}{
		{"name mismatch", "p", binding("q", "n1"), &metav1.CreateOptions{}, apierrors.IsBadRequest},
		{"no target", "p", binding("p", ""), &metav1.CreateOptions{}, apierrors.IsInvalid},
		{"target not a node", "p", &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Target: corev1.ObjectReference{Kind: "Pod", Name: "x"}},
			&metav1.CreateOptions{}, apierrors.IsInvalid},
		{"missing pod", "absent", binding("absent", "n1"), &metav1.CreateOptions{}, apierrors.IsNotFound},
		{"uid precondition", "p", wrongUID, &metav1.CreateOptions{}, apierrors.IsConflict},
		{"scheduling gates", "gated", binding("gated", "n1"), &metav1.CreateOptions{}, apierrors.IsConflict},
		{"dry run", "p", binding("p", "n1"), dryRun, func(err error) bool { return err == nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.Create(ctx, tt.url, tt.b, nil, tt.opts)
			if !tt.check(err) {
				t.Errorf("error = %v", err)
			}
		})
	}
	if pod := getPod(t, ctx, store, "p"); pod.Spec.NodeName != "" {
		t.Errorf("a refused or dry-run binding bound the pod to %q", pod.Spec.NodeName)
	}
}
