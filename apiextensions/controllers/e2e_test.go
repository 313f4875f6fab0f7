package controllers_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/capstan-io/capstan/internal/testkit"
)

var crdsGVR = apiextv1.SchemeGroupVersion.WithResource("customresourcedefinitions")

// TestControllers runs the controllers in a whole server: name conflicts
// between CRDs of a group, and the deletion of CRDs with custom resources.
func TestControllers(t *testing.T) {
	s := testkit.StartServer(t)
	dyn, err := dynamic.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, s: s, dyn: dyn}
	t.Run("NameConflicts", e.nameConflicts)
	t.Run("DeleteWithInstances", e.deleteWithInstances)
	t.Run("DeleteUnserved", e.deleteUnserved)
}

type env struct {
	t   *testing.T
	s   *testkit.Server
	dyn dynamic.Interface
}

func newCRD(plural, singular, kind string, scope apiextv1.ResourceScope, shortNames ...string) *apiextv1.CustomResourceDefinition {
	preserve := true
	return &apiextv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: plural + ".example.com"},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextv1.CustomResourceDefinitionNames{Plural: plural, Singular: singular, Kind: kind, ListKind: kind + "List", ShortNames: shortNames},
			Scope: scope,
			Versions: []apiextv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}},
			}},
		},
	}
}

func (e *env) createCRD(t *testing.T, crd *apiextv1.CustomResourceDefinition) {
	t.Helper()
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.dyn.Resource(crdsGVR).Create(context.Background(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating CRD %s: %v", crd.Name, err)
	}
}

// getCRD returns the CRD, or nil once it is gone.
func (e *env) getCRD(ctx context.Context, name string) (*apiextv1.CustomResourceDefinition, error) {
	u, err := e.dyn.Resource(crdsGVR).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	crd := &apiextv1.CustomResourceDefinition{}
	return crd, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd)
}

// waitCRD waits until cond holds for the CRD (nil once it is gone).
func (e *env) waitCRD(t *testing.T, name, what string, cond func(*apiextv1.CustomResourceDefinition) bool) *apiextv1.CustomResourceDefinition {
	t.Helper()
	var last *apiextv1.CustomResourceDefinition
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		crd, err := e.getCRD(ctx, name)
		if err != nil {
			return false, err
		}
		last = crd
		return cond(crd), nil
	})
	if err != nil {
		t.Fatalf("CRD %s: waiting for %s: %v; last seen: %s", name, what, err, describe(last))
	}
	return last
}

func describe(crd *apiextv1.CustomResourceDefinition) string {
	if crd == nil {
		return "gone"
	}
	return fmt.Sprintf("finalizers %q, deleted %v, accepted %+v, conditions %+v", crd.Finalizers, crd.DeletionTimestamp != nil, crd.Status.AcceptedNames, crd.Status.Conditions)
}

func condition(crd *apiextv1.CustomResourceDefinition, t apiextv1.CustomResourceDefinitionConditionType) *apiextv1.CustomResourceDefinitionCondition {
	if crd == nil {
		return nil
	}
	for i := range crd.Status.Conditions {
		if crd.Status.Conditions[i].Type == t {
			return &crd.Status.Conditions[i]
		}
	}
	return nil
}

func hasCondition(crd *apiextv1.CustomResourceDefinition, t apiextv1.CustomResourceDefinitionConditionType, status apiextv1.ConditionStatus, reason, message string) bool {
	c := condition(crd, t)
	return c != nil && c.Status == status && c.Reason == reason && c.Message == message && !c.LastTransitionTime.IsZero()
}

func established(crd *apiextv1.CustomResourceDefinition) bool {
	return hasCondition(crd, apiextv1.NamesAccepted, apiextv1.ConditionTrue, "NoConflicts", "no conflicts found") &&
		hasCondition(crd, apiextv1.Established, apiextv1.ConditionTrue, "InitialNamesAccepted", "the initial names have been accepted")
}

func (e *env) deleteCRD(t *testing.T, name string) {
	t.Helper()
	if err := e.dyn.Resource(crdsGVR).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting CRD %s: %v", name, err)
	}
}

func (e *env) nameConflicts(t *testing.T) {
	e.createCRD(t, newCRD("foos", "foo", "Foo", apiextv1.NamespaceScoped, "fo"))
	foos := e.waitCRD(t, "foos.example.com", "established", established)
	if !equalNames(foos.Status.AcceptedNames, foos.Spec.Names) {
		t.Errorf("foos: accepted %+v, want %+v", foos.Status.AcceptedNames, foos.Spec.Names)
	}

	// bars asks for foos' short name: it gets the rest of its names.
	e.createCRD(t, newCRD("bars", "bar", "Bar", apiextv1.NamespaceScoped, "fo", "ba"))
	bars := e.waitCRD(t, "bars.example.com", "the short name conflict", func(crd *apiextv1.CustomResourceDefinition) bool {
		return hasCondition(crd, apiextv1.NamesAccepted, apiextv1.ConditionFalse, "ShortNamesConflict", `"fo" is already in use`)
	})
	if c := condition(bars, apiextv1.Established); c == nil || c.Status != apiextv1.ConditionFalse || c.Reason != "NotAccepted" || c.Message != "not all names are accepted" {
		t.Errorf("bars: Established %+v, want False NotAccepted", c)
	}
	want := apiextv1.CustomResourceDefinitionNames{Plural: "bars", Singular: "bar", Kind: "Bar", ListKind: "BarList"}
	if !equalNames(bars.Status.AcceptedNames, want) {
		t.Errorf("bars: accepted %+v, want %+v", bars.Status.AcceptedNames, want)
	}

	// bazs asks for foos' kind.
	e.createCRD(t, newCRD("bazs", "baz", "Foo", apiextv1.NamespaceScoped))
	e.waitCRD(t, "bazs.example.com", "the kind conflict", func(crd *apiextv1.CustomResourceDefinition) bool {
		return hasCondition(crd, apiextv1.NamesAccepted, apiextv1.ConditionFalse, "ListKindConflict", `"FooList" is already in use`)
	})

	// Once foos is gone, its names go to the others.
	e.deleteCRD(t, "foos.example.com")
	e.waitCRD(t, "foos.example.com", "deletion", func(crd *apiextv1.CustomResourceDefinition) bool { return crd == nil })
	bars = e.waitCRD(t, "bars.example.com", "established", established)
	if !equalNames(bars.Status.AcceptedNames, bars.Spec.Names) {
		t.Errorf("bars: accepted %+v, want %+v", bars.Status.AcceptedNames, bars.Spec.Names)
	}
	e.waitCRD(t, "bazs.example.com", "established", established)

	e.deleteCRD(t, "bars.example.com")
	e.deleteCRD(t, "bazs.example.com")
	e.waitCRD(t, "bars.example.com", "deletion", func(crd *apiextv1.CustomResourceDefinition) bool { return crd == nil })
	e.waitCRD(t, "bazs.example.com", "deletion", func(crd *apiextv1.CustomResourceDefinition) bool { return crd == nil })
}

func equalNames(a, b apiextv1.CustomResourceDefinitionNames) bool {
	return a.Plural == b.Plural && a.Singular == b.Singular && a.Kind == b.Kind && a.ListKind == b.ListKind &&
		slices.Equal(a.ShortNames, b.ShortNames) && slices.Equal(a.Categories, b.Categories)
}

// createCR creates a custom resource, retrying while the resource is not
// served yet.
func (e *env) createCR(t *testing.T, gvr schema.GroupVersionResource, kind, ns, name string, finalizers ...string) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"n": int64(1)}}}
	u.SetAPIVersion(gvr.GroupVersion().String())
	u.SetKind(kind)
	u.SetName(name)
	u.SetFinalizers(finalizers)
	var ri dynamic.ResourceInterface = e.dyn.Resource(gvr)
	if ns != "" {
		u.SetNamespace(ns)
		ri = e.dyn.Resource(gvr).Namespace(ns)
	}
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := ri.Create(ctx, u, metav1.CreateOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("creating %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
}

// storedKeys returns the etcd keys of the custom resources of a CRD.
func (e *env) storedKeys(t *testing.T, plural string) []string {
	t.Helper()
	var out []string
	for _, k := range e.s.EtcdKeys(t) {
		if strings.Contains(k, "/example.com/"+plural+"/") {
			out = append(out, k)
		}
	}
	return out
}

func (e *env) deleteWithInstances(t *testing.T) {
	ctx := context.Background()
	client := e.s.Client(t)
	for _, ns := range []string{"ns1", "ns2"} {
		if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	e.createCRD(t, newCRD("widgets", "widget", "Widget", apiextv1.NamespaceScoped))
	e.createCRD(t, newCRD("gadgets", "gadget", "Gadget", apiextv1.ClusterScoped))
	e.waitCRD(t, "widgets.example.com", "established", established)
	e.waitCRD(t, "gadgets.example.com", "established", established)

	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	gadgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}
	e.createCR(t, widgets, "Widget", "ns1", "a")
	e.createCR(t, widgets, "Widget", "ns1", "b")
	e.createCR(t, widgets, "Widget", "ns2", "held", "example.com/hold")
	e.createCR(t, gadgets, "Gadget", "", "g1")
	e.createCR(t, gadgets, "Gadget", "", "g2")
	if n := len(e.storedKeys(t, "widgets")); n != 3 {
		t.Fatalf("%d widgets stored, want 3", n)
	}

	// Cluster-scoped custom resources go with their CRD.
	e.deleteCRD(t, "gadgets.example.com")
	e.waitCRD(t, "gadgets.example.com", "deletion", func(crd *apiextv1.CustomResourceDefinition) bool { return crd == nil })
	if keys := e.storedKeys(t, "gadgets"); len(keys) != 0 {
		t.Errorf("gadgets left in etcd: %q", keys)
	}

	// A widget held by a finalizer holds the CRD, reported as in progress.
	e.deleteCRD(t, "widgets.example.com")
	crd := e.waitCRD(t, "widgets.example.com", "deletion in progress", func(crd *apiextv1.CustomResourceDefinition) bool {
		return hasCondition(crd, apiextv1.Terminating, apiextv1.ConditionTrue, "InstanceDeletionInProgress", "CustomResource deletion is in progress")
	})
	if !slices.Contains(crd.Finalizers, apiextv1.CustomResourceCleanupFinalizer) {
		t.Errorf("finalizers %q: cleanup finalizer missing", crd.Finalizers)
	}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := e.dyn.Resource(widgets).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		return len(list.Items) == 1 && list.Items[0].GetName() == "held" && list.Items[0].GetDeletionTimestamp() != nil, nil
	})
	if err != nil {
		t.Fatalf("waiting for only the held widget to remain, marked deleted: %v", err)
	}
	if crd, err := e.getCRD(ctx, "widgets.example.com"); err != nil || crd == nil {
		t.Fatalf("CRD gone while a widget remains: %v", err)
	}

	// Releasing it lets the deletion finish.
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	if _, err := e.dyn.Resource(widgets).Namespace("ns2").Patch(ctx, "held", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("releasing the held widget: %v", err)
	}
	e.waitCRD(t, "widgets.example.com", "deletion", func(crd *apiextv1.CustomResourceDefinition) bool { return crd == nil })
	if keys := e.storedKeys(t, "widgets"); len(keys) != 0 {
		t.Errorf("widgets left in etcd: %q", keys)
	}
}

// deleteUnserved deletes a CRD that serves no version (envtest installs
// such CRDs): no client can reach its objects, and storage shows it has
// none, so its deletion completes.
func (e *env) deleteUnserved(t *testing.T) {
	crd := newCRD("hiddens", "hidden", "Hidden", apiextv1.NamespaceScoped)
	crd.Spec.Versions[0].Served = false
	e.createCRD(t, crd)
	e.waitCRD(t, crd.Name, "established", established)
	e.deleteCRD(t, crd.Name)
	e.waitCRD(t, crd.Name, "deletion", func(crd *apiextv1.CustomResourceDefinition) bool { return crd == nil })
}
