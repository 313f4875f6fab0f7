package controllers_test

import (
	"context"
	"fmt"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/capstan-io/capstan/internal/testkit"
)

// TestEstablishedInOneWrite: a single server accepts a new CRD's names and
// establishes it in one status write, ending in kube's conditions (in
// kube's order), and serves its resource by the time a watch shows it
// Established: a custom resource created at once, with no retry, is
// created.
func TestEstablishedInOneWrite(t *testing.T) {
	s := testkit.StartServer(t)
	dyn, err := dynamic.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	list, err := dyn.Resource(crdsGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := dyn.Resource(crdsGVR).Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	const n = 20
	e := &env{t: t, s: s, dyn: dyn}
	for i := range n {
		plural := fmt.Sprintf("gizmo%ds", i)
		e.createCRD(t, newCRD(plural, fmt.Sprintf("gizmo%d", i), fmt.Sprintf("Gizmo%d", i), apiextv1.NamespaceScoped))
	}

	writes := map[string]int{} // status writes seen per CRD
	for done := 0; done < n; {
		ev, ok := <-w.ResultChan()
		if !ok {
			t.Fatalf("watch ended with %d of %d CRDs established", done, n)
		}
		if ev.Type != watch.Added && ev.Type != watch.Modified {
			t.Fatalf("unexpected %s event: %v", ev.Type, ev.Object)
		}
		crd := &apiextv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(ev.Object.(*unstructured.Unstructured).Object, crd); err != nil {
			t.Fatal(err)
		}
		if ev.Type == watch.Added {
			continue
		}
		writes[crd.Name]++
		if !established(crd) {
			t.Errorf("%s: a status write that does not establish it: %s", crd.Name, describe(crd))
			continue
		}
		done++
		var types []apiextv1.CustomResourceDefinitionConditionType
		for _, c := range crd.Status.Conditions {
			types = append(types, c.Type)
		}
		if fmt.Sprint(types) != fmt.Sprint([]apiextv1.CustomResourceDefinitionConditionType{apiextv1.NamesAccepted, apiextv1.Established}) {
			t.Errorf("%s: conditions %v, want NamesAccepted then Established", crd.Name, types)
		}
		if !equalNames(crd.Status.AcceptedNames, crd.Spec.Names) {
			t.Errorf("%s: accepted %+v, want %+v", crd.Name, crd.Status.AcceptedNames, crd.Spec.Names)
		}
		// Served already: no retry.
		gvr := apiextv1.SchemeGroupVersion.WithResource(crd.Spec.Names.Plural)
		gvr.Group, gvr.Version = crd.Spec.Group, crd.Spec.Versions[0].Name
		cr := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"n": int64(1)}}}
		cr.SetAPIVersion(gvr.GroupVersion().String())
		cr.SetKind(crd.Spec.Names.Kind)
		cr.SetName("first")
		if _, err := dyn.Resource(gvr).Namespace("default").Create(ctx, cr, metav1.CreateOptions{}); err != nil {
			t.Errorf("%s: creating a custom resource once Established: %v", crd.Name, err)
		}
	}
	for name, count := range writes {
		if count != 1 {
			t.Errorf("%s: %d status writes before Established, want 1", name, count)
		}
	}
}
