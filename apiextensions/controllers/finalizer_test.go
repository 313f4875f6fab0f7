package controllers

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

var foosV1 = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "foos"}

func foo(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("example.com/v1")
	u.SetKind("Foo")
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// deletingFoos is an established, deleted CRD of foos.example.com served
// at v1 and stored at v1.
func deletingFoos() *apiextv1.CustomResourceDefinition {
	crd := withAccepted(withSpec(testCRD("foos"), crdNames("foos", "foo", "Foo", "FooList")), crdNames("foos", "foo", "Foo", "FooList"))
	crd.Spec.Scope = apiextv1.NamespaceScoped
	crd.Spec.Versions = []apiextv1.CustomResourceDefinitionVersion{{Name: "v1beta1", Served: true}, {Name: "v1", Served: true, Storage: true}}
	now := metav1.Now()
	crd.DeletionTimestamp = &now
	crd.Finalizers = []string{apiextv1.CustomResourceCleanupFinalizer}
	return withCondition(crd, apiextv1.Established, apiextv1.ConditionTrue, "InitialNamesAccepted", "the initial names have been accepted")
}

// fakeFinalizer returns a finalizer on a fake dynamic client holding objs,
// with a clock the test moves.
func fakeFinalizer(objs ...runtime.Object) (*finalizerController, *dynamicfake.FakeDynamicClient, *time.Time) {
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{foosV1: "FooList"}, objs...)
	now := time.Unix(1000, 0)
	c := &finalizerController{
		queueLoop: &queueLoop{logger: discardLogger()},
		dynamic:   dyn,
		now:       func() time.Time { return now },
		waiting:   map[string]waitState{},
	}
	return c, dyn, &now
}

// deleteCollectionFromTracker serves deletecollection from the fake's
// tracker and records the namespaces it was called for.
func deleteCollectionFromTracker(dyn *dynamicfake.FakeDynamicClient, calls *[]string) clienttesting.ReactionFunc {
	return func(action clienttesting.Action) (bool, runtime.Object, error) {
		ns := action.GetNamespace()
		*calls = append(*calls, ns)
		list, err := dyn.Tracker().List(foosV1, schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Foo"}, ns)
		if err != nil {
			return true, nil, err
		}
		for _, item := range list.(*unstructured.UnstructuredList).Items {
			if err := dyn.Tracker().Delete(foosV1, item.GetNamespace(), item.GetName()); err != nil {
				return true, nil, err
			}
		}
		return true, nil, nil
	}
}

func remaining(t *testing.T, dyn *dynamicfake.FakeDynamicClient) int {
	t.Helper()
	list, err := dyn.Resource(foosV1).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return len(list.Items)
}

func TestDeleteInstancesPerNamespace(t *testing.T) {
	c, dyn, _ := fakeFinalizer(foo("a", "1"), foo("a", "2"), foo("b", "3"))
	var calls []string
	dyn.PrependReactor("delete-collection", "foos", deleteCollectionFromTracker(dyn, &calls))

	cond, retry, err := c.deleteInstances(context.Background(), deletingFoos())
	if err != nil || retry != 0 {
		t.Fatalf("deleteInstances: retry %v, err %v", retry, err)
	}
	slices.Sort(calls)
	if !slices.Equal(calls, []string{"a", "b"}) {
		t.Errorf("deletecollection in %q, want once in a and b", calls)
	}
	want := apiextv1.CustomResourceDefinitionCondition{Type: apiextv1.Terminating, Status: apiextv1.ConditionFalse, Reason: "InstanceDeletionCompleted", Message: "removed all instances"}
	if cond != want {
		t.Errorf("condition %+v, want %+v", cond, want)
	}
	if n := remaining(t, dyn); n != 0 {
		t.Errorf("%d objects left", n)
	}
}

func TestDeleteInstancesOneByOne(t *testing.T) {
	c, dyn, _ := fakeFinalizer(foo("a", "1"), foo("a", "2"), foo("b", "3"))
	dyn.PrependReactor("delete-collection", "foos", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewMethodNotSupported(foosV1.GroupResource(), "deletecollection")
	})
	cond, retry, err := c.deleteInstances(context.Background(), deletingFoos())
	if err != nil || retry != 0 || cond.Reason != "InstanceDeletionCompleted" {
		t.Fatalf("deleteInstances: %+v, retry %v, err %v", cond, retry, err)
	}
	deletes := 0
	for _, a := range dyn.Actions() {
		if a.GetVerb() == "delete" {
			deletes++
		}
	}
	if deletes != 3 {
		t.Errorf("%d deletes, want 3", deletes)
	}
}

func TestDeleteInstancesFailures(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		reactor func(*dynamicfake.FakeDynamicClient)
		crd     func(*apiextv1.CustomResourceDefinition)
		reason  string
		message string
	}{{
		name: "list fails",
		reactor: func(dyn *dynamicfake.FakeDynamicClient) {
			dyn.PrependReactor("list", "foos", func(clienttesting.Action) (bool, runtime.Object, error) { return true, nil, boom })
		},
		reason: "InstanceDeletionFailed", message: "could not list instances: boom",
	}, {
		name: "deletecollection fails",
		reactor: func(dyn *dynamicfake.FakeDynamicClient) {
			dyn.PrependReactor("delete-collection", "foos", func(clienttesting.Action) (bool, runtime.Object, error) { return true, nil, boom })
		},
		reason: "InstanceDeletionFailed", message: "could not issue all deletes: boom",
	}, {
		name: "no served version",
		crd: func(crd *apiextv1.CustomResourceDefinition) {
			crd.Spec.Versions[0].Served, crd.Spec.Versions[1].Served = false, false
		},
		reason:  "InstanceDeletionFailed",
		message: "could not list instances: unable to find a custom resource client for foos.example.com: no version is served",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, dyn, _ := fakeFinalizer(foo("a", "1"), foo("b", "2"))
			if tt.reactor != nil {
				tt.reactor(dyn)
			}
			crd := deletingFoos()
			if tt.crd != nil {
				tt.crd(crd)
			}
			cond, retry, err := c.deleteInstances(context.Background(), crd)
			if err == nil || retry != 0 {
				t.Fatalf("retry %v, err %v: want an error", retry, err)
			}
			want := apiextv1.CustomResourceDefinitionCondition{Type: apiextv1.Terminating, Status: apiextv1.ConditionTrue, Reason: tt.reason, Message: tt.message}
			if cond != want {
				t.Errorf("condition %+v, want %+v", cond, want)
			}
			if len(c.waiting) != 0 {
				t.Error("waiting after a failure")
			}
		})
	}
}

// TestDeleteInstancesWaits checks that objects going away slowly are looked
// at again without new deletes, until the wait times out.
func TestDeleteInstancesWaits(t *testing.T) {
	c, dyn, now := fakeFinalizer(foo("a", "1"))
	var calls []string
	dyn.PrependReactor("delete-collection", "foos", func(action clienttesting.Action) (bool, runtime.Object, error) {
		calls = append(calls, action.GetNamespace()) // held by a finalizer: nothing goes
		return true, nil, nil
	})
	crd := deletingFoos()
	ctx := context.Background()

	if _, retry, err := c.deleteInstances(ctx, crd); err != nil || retry != instancePollInterval {
		t.Fatalf("first pass: retry %v, err %v", retry, err)
	}
	*now = now.Add(30 * time.Second)
	if _, retry, err := c.deleteInstances(ctx, crd); err != nil || retry != instancePollInterval {
		t.Fatalf("second pass: retry %v, err %v", retry, err)
	}
	if len(calls) != 1 {
		t.Errorf("%d deletecollections, want 1", len(calls))
	}

	*now = now.Add(31 * time.Second)
	cond, retry, err := c.deleteInstances(ctx, crd)
	if !errors.Is(err, context.DeadlineExceeded) || retry != 0 {
		t.Fatalf("after the timeout: retry %v, err %v", retry, err)
	}
	want := apiextv1.CustomResourceDefinitionCondition{Type: apiextv1.Terminating, Status: apiextv1.ConditionTrue,
		Reason: "InstanceDeletionCheck", Message: "could not confirm zero CustomResources remaining: context deadline exceeded"}
	if cond != want {
		t.Errorf("condition %+v, want %+v", cond, want)
	}

	// The next pass starts over, deletes included; once the objects are
	// gone it completes.
	if err := dyn.Tracker().Delete(foosV1, "a", "1"); err != nil {
		t.Fatal(err)
	}
	if cond, retry, err := c.deleteInstances(ctx, crd); err != nil || retry != 0 || cond.Reason != "InstanceDeletionCompleted" {
		t.Fatalf("last pass: %+v, retry %v, err %v", cond, retry, err)
	}
	if len(c.waiting) != 0 {
		t.Error("still waiting after completion")
	}
}

func TestServedVersion(t *testing.T) {
	v := func(name string, served, storage bool) apiextv1.CustomResourceDefinitionVersion {
		return apiextv1.CustomResourceDefinitionVersion{Name: name, Served: served, Storage: storage}
	}
	tests := []struct {
		name     string
		versions []apiextv1.CustomResourceDefinitionVersion
		want     string
	}{
		{"storage served", []apiextv1.CustomResourceDefinitionVersion{v("v1beta1", true, false), v("v1", true, true)}, "v1"},
		{"storage not served", []apiextv1.CustomResourceDefinitionVersion{v("v1", false, true), v("v2", true, false), v("v3", true, false)}, "v2"},
		{"none served", []apiextv1.CustomResourceDefinitionVersion{v("v1", false, true)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			crd := testCRD("foos")
			crd.Spec.Versions = tt.versions
			if got := servedVersion(crd); got != tt.want {
				t.Errorf("servedVersion = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFinalizerShouldLook(t *testing.T) {
	base := deletingFoos()
	tests := []struct {
		name   string
		change func(*apiextv1.CustomResourceDefinition)
		want   bool
	}{
		{"resync", func(*apiextv1.CustomResourceDefinition) {}, true},
		{"own terminating condition", func(c *apiextv1.CustomResourceDefinition) {
			c.ResourceVersion = "11"
			setCondition(c, apiextv1.CustomResourceDefinitionCondition{Type: apiextv1.Terminating, Status: apiextv1.ConditionTrue}, metav1.Now())
			c.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "x"}}
		}, false},
		{"other change", func(c *apiextv1.CustomResourceDefinition) {
			c.ResourceVersion = "11"
			c.Labels = map[string]string{"a": "b"}
		}, true},
		{"finalizer gone", func(c *apiextv1.CustomResourceDefinition) {
			c.ResourceVersion = "11"
			c.Finalizers = nil
		}, false},
		{"not deleted", func(c *apiextv1.CustomResourceDefinition) {
			c.DeletionTimestamp = nil
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			updated := base.DeepCopy()
			tt.change(updated)
			if got := finalizerShouldLook(base, updated); got != tt.want {
				t.Errorf("finalizerShouldLook = %v, want %v", got, tt.want)
			}
		})
	}
}

// instancesFunc answers HasObjects with a function.
type instancesFunc func(gr schema.GroupResource) (bool, error)

func (f instancesFunc) HasObjects(_ context.Context, gr schema.GroupResource) (bool, error) {
	return f(gr)
}

// TestDeleteInstancesAsksStorageFirst checks that a CRD whose resource
// storage says is empty completes without a request to the server, and
// that storage saying otherwise, or failing, leaves the lists and deletes
// to do.
func TestDeleteInstancesAsksStorageFirst(t *testing.T) {
	for _, tc := range []struct {
		name    string
		has     bool
		err     error
		actions bool
	}{
		{name: "empty", has: false},
		{name: "has objects", has: true, actions: true},
		{name: "storage fails", err: errors.New("etcd is away"), actions: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, dyn, _ := fakeFinalizer()
			var asked []schema.GroupResource
			c.instances = instancesFunc(func(gr schema.GroupResource) (bool, error) {
				asked = append(asked, gr)
				return tc.has, tc.err
			})
			crd := deletingFoos()
			crd.Status.AcceptedNames.Plural = "accepted-foos"
			cond, retry, err := c.deleteInstances(context.Background(), crd)
			if err != nil || retry != 0 || cond != deletionCompleted {
				t.Fatalf("%+v, retry %v, err %v; want %+v", cond, retry, err, deletionCompleted)
			}
			if want := []schema.GroupResource{{Group: "example.com", Resource: "accepted-foos"}}; !slices.Equal(asked, want) {
				t.Errorf("asked storage of %v, want %v", asked, want)
			}
			if got := len(dyn.Actions()) > 0; got != tc.actions {
				t.Errorf("requests to the server: %v, want %v (%v)", got, tc.actions, dyn.Actions())
			}
		})
	}
}
