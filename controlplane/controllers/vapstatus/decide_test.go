package vapstatus

import (
	"log/slog"
	"testing"

	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/capstan-io/capstan/admission/policy/validating"
)

// TestChanged: a policy is checked when its generation is one its status
// has not seen. The loop's client is never used.
func TestChanged(t *testing.T) {
	client := kubernetes.NewForConfigOrDie(&rest.Config{Host: "https://127.0.0.1:1"})
	c, err := New(client, &validating.TypeChecker{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer c.queue.ShutDown()
	for _, tc := range []struct {
		name                 string
		generation, observed int64
		queued               bool
	}{
		{"new", 1, 0, true},
		{"spec changed since", 3, 2, true},
		{"checked", 2, 2, false},
	} {
		p := &arv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p", Generation: tc.generation},
			Status: arv1.ValidatingAdmissionPolicyStatus{ObservedGeneration: tc.observed}}
		c.changed(p)
		if got := c.queue.Len() == 1; got != tc.queued {
			t.Errorf("%s: queued %v, want %v", tc.name, got, tc.queued)
		}
		for c.queue.Len() > 0 {
			k, _ := c.queue.Get()
			c.queue.Done(k)
		}
	}
	c.changed(&arv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "p", Generation: 1}})
	if c.queue.Len() != 0 {
		t.Error("a binding was queued")
	}
	if _, err := New(nil, nil, nil); err == nil {
		t.Error("New without its dependencies succeeded")
	}
}
