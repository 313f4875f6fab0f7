package perns

import (
	"context"
	"log/slog"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// newController is a controller whose client is never used: the tests
// here call its event handlers, not its loop.
func newController(t *testing.T) *Controller {
	t.Helper()
	client := kubernetes.NewForConfigOrDie(&rest.Config{Host: "https://127.0.0.1:1"})
	c, err := New(Config{Name: "test", Client: client, ObjectName: "kept", Logger: slog.New(slog.DiscardHandler),
		Objects: coreinformers.NewConfigMapInformer(client, "", 0, cache.Indexers{}),
		Sync:    func(context.Context, string, any) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.queue.ShutDown)
	return c
}

// drain takes every key queued.
func drain(c *Controller) []string {
	var keys []string
	for c.queue.Len() > 0 {
		k, _ := c.queue.Get()
		c.queue.Done(k)
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func TestEnqueue(t *testing.T) {
	c := newController(t)
	ns := func(name string, phase corev1.NamespacePhase) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NamespaceStatus{Phase: phase}}
	}
	cm := func(namespace, name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	}
	for _, tc := range []struct {
		name string
		on   func(any)
		obj  any
		want []string
	}{
		{"active namespace", c.enqueueNamespace, ns("a", corev1.NamespaceActive), []string{"a"}},
		{"terminating namespace", c.enqueueNamespace, ns("a", corev1.NamespaceTerminating), nil},
		{"namespace without a phase", c.enqueueNamespace, ns("a", ""), nil},
		{"the kept object", c.enqueueObject, cm("a", "kept"), []string{"a"}},
		{"another object", c.enqueueObject, cm("a", "other"), nil},
		{"the kept object, deleted unseen", c.enqueueObject, cache.DeletedFinalStateUnknown{Key: "a/kept", Obj: cm("a", "kept")}, []string{"a"}},
		{"not an object", c.enqueueObject, "a/kept", nil},
	} {
		tc.on(tc.obj)
		if got := drain(c); !slices.Equal(got, tc.want) {
			t.Errorf("%s: queued %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestNew(t *testing.T) {
	if _, err := New(Config{Name: "test"}); err == nil || err.Error() != "perns: Client, Objects, Sync and Logger are required" {
		t.Errorf("New without its dependencies: %v", err)
	}
}

func TestGone(t *testing.T) {
	terminating := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "kept", nil)
	terminating.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause}}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"namespace gone", apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "a"), true},
		{"namespace terminating", terminating, true},
		{"forbidden otherwise", apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "kept", nil), false},
		{"already there", apierrors.NewAlreadyExists(schema.GroupResource{Resource: "configmaps"}, "kept"), false},
	} {
		if got := gone(tc.err); got != tc.want {
			t.Errorf("%s: gone = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestNamed(t *testing.T) {
	var o metav1.ListOptions
	named(RootCAConfigMap)(&o)
	if o.FieldSelector != "metadata.name=kube-root-ca.crt" || o.LabelSelector != "" {
		t.Errorf("list options %+v", o)
	}
}
