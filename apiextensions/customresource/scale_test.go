package customresource

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/request"
	"github.com/capstan-io/capstan/storage/embedded/embeddedtest"
	"github.com/capstan-io/capstan/storage/etcd3"
)

// The scale tests run on a real embedded etcd, started by the first test
// that needs it.
var etcd embeddedtest.Shared

func TestMain(m *testing.M) { os.Exit(etcd.Main(m)) }

// newCronTabStore is a CronTab Store (status subresource on) on the
// embedded etcd under a fresh prefix, stored as JSON.
func newCronTabStore(t *testing.T) *registry.Store {
	t.Helper()
	gr := schema.GroupResource{Group: "stable.example.com", Resource: "crontabs"}
	newFunc := func() runtime.Object {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(cronTabGVK)
		return u
	}
	newList := func() runtime.Object {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(cronTabGVK.GroupVersion().WithKind("CronTabList"))
		return l
	}
	st, err := etcd3.New(etcd3.Config{
		Client: etcd.Server(t).Client(), Codec: unstructured.UnstructuredJSONScheme, NewFunc: newFunc, NewListFunc: newList,
		Prefix: etcd.Prefix(), ResourcePrefix: "/stable.example.com/crontabs", GroupResource: gr,
	})
	if err != nil {
		t.Fatal(err)
	}
	return registry.NewStore(registry.StoreConfig{
		Resource: gr, Kind: "CronTab", New: newFunc, NewList: newList, KeyPrefix: "/stable.example.com/crontabs",
		Strategy: newCronTabStrategy(t, true), Storage: st,
	})
}

// setScale is an update that changes the Scale with f.
func setScale(f func(*autoscalingv1.Scale)) rest.UpdatedObjectFunc {
	return func(_ context.Context, old runtime.Object) (runtime.Object, error) {
		s := old.DeepCopyObject().(*autoscalingv1.Scale)
		f(s)
		return s, nil
	}
}

func TestScaleGet(t *testing.T) {
	ctx := request.WithNamespace(context.Background(), "default")
	store := newCronTabStore(t)
	scale := newCronTabScaleREST(store)
	status := store.Subresource(store.Strategy().(*Strategy).StatusStrategy())

	create := func(name string, spec map[string]any) *unstructured.Unstructured {
		t.Helper()
		out, err := store.Create(ctx, cronTab(name, spec, nil), nil, &metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return out.(*unstructured.Unstructured)
	}
	full := create("full", spec())
	// status comes through its subresource
	withStatus := with(full, map[string]any{"replicas": int64(1), "labelSelector": "app=cron"}, "status")
	updated, _, err := status.Update(ctx, "full", rest.UpdatedObjectFunc(func(context.Context, runtime.Object) (runtime.Object, error) {
		return withStatus, nil
	}), nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	full = updated.(*unstructured.Unstructured)
	noStatus := create("nostatus", spec())
	create("noreplicas", map[string]any{"cronSpec": "* * * * *"})

	tests := []struct {
		name    string
		want    *autoscalingv1.Scale
		wantErr string
	}{
		{name: "full", want: &autoscalingv1.Scale{
			TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"},
			ObjectMeta: metav1.ObjectMeta{Name: "full", Namespace: "default", UID: full.GetUID(),
				ResourceVersion: full.GetResourceVersion(), CreationTimestamp: full.GetCreationTimestamp()},
			Spec:   autoscalingv1.ScaleSpec{Replicas: 2},
			Status: autoscalingv1.ScaleStatus{Replicas: 1, Selector: "app=cron"},
		}},
		{name: "nostatus", want: &autoscalingv1.Scale{
			TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"},
			ObjectMeta: metav1.ObjectMeta{Name: "nostatus", Namespace: "default", UID: noStatus.GetUID(),
				ResourceVersion: noStatus.GetResourceVersion(), CreationTimestamp: noStatus.GetCreationTimestamp()},
			Spec: autoscalingv1.ScaleSpec{Replicas: 2},
		}},
		{name: "noreplicas", wantErr: `Internal error occurred: the spec replicas field ".spec.replicas" does not exist`},
		{name: "missing", wantErr: `crontabs.stable.example.com "missing" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := scale.Get(ctx, tt.name, &metav1.GetOptions{})
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !sameObject(got, tt.want) {
				t.Errorf("Get = %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func sameObject(a, b runtime.Object) bool {
	ua, err1 := runtime.DefaultUnstructuredConverter.ToUnstructured(a)
	ub, err2 := runtime.DefaultUnstructuredConverter.ToUnstructured(b)
	return err1 == nil && err2 == nil && equalJSON(ua, ub)
}

func TestScaleUpdate(t *testing.T) {
	ctx := request.WithNamespace(context.Background(), "default")
	store := newCronTabStore(t)
	scale := newCronTabScaleREST(store)
	if _, err := store.Create(ctx, cronTab("a", spec(), nil), nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Create(ctx, cronTab("noreplicas", map[string]any{"cronSpec": "* * * * *"}, nil), nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	current := func(name string) *unstructured.Unstructured {
		obj, err := store.Get(ctx, name, &metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return obj.(*unstructured.Unstructured)
	}

	tests := []struct {
		name    string
		obj     string
		update  rest.UpdatedObjectInfo
		wantErr string // substring; "" for success
		want    int64  // spec.replicas after
		wantGen int64
	}{
		{name: "scale up", obj: "a", update: setScale(func(s *autoscalingv1.Scale) { s.Spec.Replicas = 5 }), want: 5, wantGen: 2},
		{name: "same replicas do not bump", obj: "a", update: setScale(func(s *autoscalingv1.Scale) {}), want: 5, wantGen: 2},
		{name: "with the current resourceVersion", obj: "a", update: setScale(func(s *autoscalingv1.Scale) { s.Spec.Replicas = 0 }), want: 0, wantGen: 3},
		{name: "stale resourceVersion", obj: "a", update: setScale(func(s *autoscalingv1.Scale) { s.Spec.Replicas = 1; s.ResourceVersion = "1" }),
			wantErr: "the object has been modified"},
		{name: "negative replicas", obj: "a", update: setScale(func(s *autoscalingv1.Scale) { s.Spec.Replicas = -1 }),
			wantErr: `CronTab.stable.example.com "a" is invalid: .spec.replicas: Invalid value: -1: should be a non-negative integer`},
		{name: "missing replicas left unset", obj: "noreplicas", update: setScale(func(s *autoscalingv1.Scale) {}),
			wantErr: `the spec replicas field ".spec.replicas" cannot be empty`},
		{name: "missing replicas set", obj: "noreplicas", update: setScale(func(s *autoscalingv1.Scale) { s.Spec.Replicas = 3 }), want: 3, wantGen: 2},
		{name: "not a Scale", obj: "a", update: rest.UpdatedObjectFunc(func(context.Context, runtime.Object) (runtime.Object, error) {
			return &unstructured.Unstructured{}, nil
		}), wantErr: "wrong object passed to Scale update"},
		{name: "missing object", obj: "missing", update: setScale(func(s *autoscalingv1.Scale) {}), wantErr: `"missing" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, created, err := scale.Update(ctx, tt.obj, tt.update, nil, nil, false, &metav1.UpdateOptions{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || created {
				t.Fatalf("Update = created %v, %v", created, err)
			}
			cr := current(tt.obj)
			if r, _, _ := unstructured.NestedInt64(cr.Object, "spec", "replicas"); r != tt.want {
				t.Errorf("spec.replicas = %d, want %d", r, tt.want)
			}
			if g := cr.GetGeneration(); g != tt.wantGen {
				t.Errorf("generation = %d, want %d", g, tt.wantGen)
			}
			s := out.(*autoscalingv1.Scale)
			if int64(s.Spec.Replicas) != tt.want || s.ResourceVersion != cr.GetResourceVersion() {
				t.Errorf("answer = %d at %s, want %d at %s", s.Spec.Replicas, s.ResourceVersion, tt.want, cr.GetResourceVersion())
			}
		})
	}
}

func TestScaleAdmission(t *testing.T) {
	ctx := request.WithNamespace(context.Background(), "default")
	store := newCronTabStore(t)
	scale := newCronTabScaleREST(store)
	if _, err := store.Create(ctx, cronTab("a", spec(), nil), nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var sawNew, sawOld int32 = -1, -1
	deny := errors.New("denied")
	validate := func(_ context.Context, obj, old runtime.Object) error {
		s, ok := obj.(*autoscalingv1.Scale)
		o, ok2 := old.(*autoscalingv1.Scale)
		if !ok || !ok2 {
			t.Errorf("admission saw %T, %T; want Scales", obj, old)
			return nil
		}
		sawNew, sawOld = s.Spec.Replicas, o.Spec.Replicas
		return apierrors.NewForbidden(schema.GroupResource{Group: "autoscaling", Resource: "scale"}, "a", deny)
	}
	_, _, err := scale.Update(ctx, "a", setScale(func(s *autoscalingv1.Scale) { s.Spec.Replicas = 4 }), nil, validate, false, &metav1.UpdateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("err = %v, want the admission's", err)
	}
	if sawNew != 4 || sawOld != 2 {
		t.Errorf("admission saw replicas %d (old %d), want 4 (old 2)", sawNew, sawOld)
	}
	if r, _, _ := unstructured.NestedInt64(mustGet(t, store, ctx, "a").Object, "spec", "replicas"); r != 2 {
		t.Errorf("replicas = %d after a denied update", r)
	}
}

func mustGet(t *testing.T, store *registry.Store, ctx context.Context, name string) *unstructured.Unstructured {
	t.Helper()
	obj, err := store.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*unstructured.Unstructured)
}

func newCronTabScaleREST(store *registry.Store) *ScaleREST {
	crd := &apiextv1.CustomResourceDefinition{Spec: apiextv1.CustomResourceDefinitionSpec{
		Group:    cronTabGVK.Group,
		Versions: []apiextv1.CustomResourceDefinitionVersion{{Name: cronTabGVK.Version, Subresources: &apiextv1.CustomResourceSubresources{Scale: cronTabScale()}}},
	}}
	return NewScaleREST(store, cronTabScale(), cronTabGVK.GroupVersion(), ReplicasPaths(crd))
}

func TestReplicasPaths(t *testing.T) {
	crd := &apiextv1.CustomResourceDefinition{Spec: apiextv1.CustomResourceDefinitionSpec{
		Group: "g.example.com",
		Versions: []apiextv1.CustomResourceDefinitionVersion{
			{Name: "v1", Subresources: &apiextv1.CustomResourceSubresources{Scale: &apiextv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.size.count"}}},
			{Name: "v2", Subresources: &apiextv1.CustomResourceSubresources{Status: &apiextv1.CustomResourceSubresourceStatus{}}},
			{Name: "v3"},
		},
	}}
	got := map[string]string{}
	for gv, path := range ReplicasPaths(crd) {
		got[gv] = "<nil>"
		if path != nil {
			got[gv] = path.String()
		}
	}
	want := map[string]string{"g.example.com/v1": ".spec.size.count", "g.example.com/v2": "<nil>", "g.example.com/v3": "<nil>"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
