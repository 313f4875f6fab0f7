package crd

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// gadgetCRD has four served versions converted by the None strategy: v1
// stores, v2 is newer, v1beta1 is deprecated with a warning of its own and
// v1alpha1 with kube's.
const gadgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.versions.example.com}
spec:
  group: versions.example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema: &schema
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              color: {type: string}
              size: {type: integer}
  - {name: v2, served: true, storage: false, schema: *schema}
  - name: v1beta1
    served: true
    storage: false
    deprecated: true
    deprecationWarning: "versions.example.com/v1beta1 Gadget is going away; use v1"
    schema: *schema
  - {name: v1alpha1, served: true, storage: false, deprecated: true, schema: *schema}
`

func gadgets(d dynamic.Interface, version, ns string) dynamic.ResourceInterface {
	return d.Resource(schema.GroupVersionResource{Group: "versions.example.com", Version: version, Resource: "gadgets"}).Namespace(ns)
}

// TestCRDVersionsNoneConversion: an object created at the storage version
// is read, listed, watched and updated at another served version with only
// its apiVersion rewritten, as the None strategy converts.
func TestCRDVersionsNoneConversion(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	e.CreateCRD(t, gadgetCRD)
	d := e.Dynamic(t)
	v1, v2 := gadgets(d, "v1", ns), gadgets(d, "v2", ns)

	w, err := v2.Watch(e2eutil.Ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	created, err := v1.Create(e2eutil.Ctx(t), e2eutil.FromYAML(t, "apiVersion: versions.example.com/v1\nkind: Gadget\nmetadata: {name: g}\nspec: {color: red, size: 1}\n"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.GetAPIVersion() != "versions.example.com/v1" {
		t.Fatalf("created at %s, want v1", created.GetAPIVersion())
	}
	ev := e2eutil.NextEvent(t, w)
	if obj := ev.Object.(*unstructured.Unstructured); ev.Type != watch.Added || obj.GetAPIVersion() != "versions.example.com/v2" ||
		obj.GetName() != "g" || obj.GetResourceVersion() != created.GetResourceVersion() {
		t.Fatalf("v2 watch event = %s %v, want ADDED g at versions.example.com/v2", ev.Type, ev.Object)
	}

	got, err := v2.Get(e2eutil.Ctx(t), "g", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetAPIVersion() != "versions.example.com/v2" || got.GetKind() != "Gadget" || got.GetUID() != created.GetUID() {
		t.Fatalf("v2 get = %s %s %s, want the object at versions.example.com/v2", got.GetAPIVersion(), got.GetKind(), got.GetUID())
	}
	if color, _, _ := unstructured.NestedString(got.Object, "spec", "color"); color != "red" {
		t.Fatalf("v2 spec.color = %q, want red", color)
	}
	list, err := v2.List(e2eutil.Ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if list.GetAPIVersion() != "versions.example.com/v2" || list.GetKind() != "GadgetList" || len(list.Items) != 1 ||
		list.Items[0].GetAPIVersion() != "versions.example.com/v2" {
		t.Fatalf("v2 list = %s %s with %d items, want a GadgetList at v2 of one v2 object", list.GetAPIVersion(), list.GetKind(), len(list.Items))
	}

	// An update at v2 is stored (at v1) and read at both.
	_ = unstructured.SetNestedField(got.Object, "blue", "spec", "color")
	updated, err := v2.Update(e2eutil.Ctx(t), got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if updated.GetAPIVersion() != "versions.example.com/v2" || updated.GetGeneration() != 2 {
		t.Fatalf("v2 update = %s generation %d, want v2 generation 2", updated.GetAPIVersion(), updated.GetGeneration())
	}
	ev = e2eutil.NextEvent(t, w)
	if obj := ev.Object.(*unstructured.Unstructured); ev.Type != watch.Modified || obj.GetAPIVersion() != "versions.example.com/v2" ||
		obj.GetResourceVersion() != updated.GetResourceVersion() {
		t.Fatalf("v2 watch event = %s %v, want MODIFIED at v2", ev.Type, ev.Object)
	}
	atV1, err := v1.Get(e2eutil.Ctx(t), "g", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if color, _, _ := unstructured.NestedString(atV1.Object, "spec", "color"); color != "blue" || atV1.GetAPIVersion() != "versions.example.com/v1" ||
		atV1.GetResourceVersion() != updated.GetResourceVersion() {
		t.Fatalf("v1 get after the v2 update = %s spec.color %q rv %s, want v1 blue %s", atV1.GetAPIVersion(), color, atV1.GetResourceVersion(), updated.GetResourceVersion())
	}
	// A body at another version than the path's is refused, as kube does.
	body := []byte(`{"apiVersion":"versions.example.com/v1","kind":"Gadget","metadata":{"name":"x"}}`)
	e.Do(t, http.MethodPost, "/apis/versions.example.com/v2/namespaces/"+ns+"/gadgets", body).
		WantStatus(t, 400, metav1.StatusReasonBadRequest, "the API version in the data (versions.example.com/v1) does not match the expected API version (versions.example.com/v2)")
}

// TestCRDDeprecatedVersions: every request to a deprecated version carries
// a Warning: the CRD's deprecationWarning, or kube's default naming the
// newest served version that is not deprecated; others carry none.
func TestCRDDeprecatedVersions(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	e.CreateCRD(t, gadgetCRD)
	for _, tt := range []struct{ version, warning string }{
		{"v1beta1", "versions.example.com/v1beta1 Gadget is going away; use v1"},
		{"v1alpha1", "versions.example.com/v1alpha1 Gadget is deprecated; use versions.example.com/v2 Gadget"},
		{"v1", ""},
		{"v2", ""},
	} {
		t.Run(tt.version, func(t *testing.T) {
			got := &e2eutil.Warnings{}
			cfg := rest.CopyConfig(e.Config)
			cfg.WarningHandler = got
			d, err := dynamic.NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			name := "g-" + tt.version
			gs := gadgets(d, tt.version, ns)
			if _, err := gs.Create(e2eutil.Ctx(t), e2eutil.FromYAML(t, "apiVersion: versions.example.com/"+tt.version+"\nkind: Gadget\nmetadata: {name: "+name+"}\n"), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := gs.Get(e2eutil.Ctx(t), name, metav1.GetOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := gs.List(e2eutil.Ctx(t), metav1.ListOptions{}); err != nil {
				t.Fatal(err)
			}
			want := ""
			if tt.warning != "" {
				want = tt.warning + "\n" + tt.warning + "\n" + tt.warning
			}
			if got.Joined() != want {
				t.Fatalf("warnings = %q, want %q on each of create, get and list", got.Joined(), want)
			}
			// As a header: kube's 299 warning.
			r := e.Do(t, http.MethodGet, "/apis/versions.example.com/"+tt.version+"/namespaces/"+ns+"/gadgets/"+name, nil)
			if header := r.Header.Values("Warning"); tt.warning != "" && !slices.Equal(header, []string{`299 - "` + tt.warning + `"`}) ||
				tt.warning == "" && len(header) > 0 {
				t.Fatalf("Warning header = %q", header)
			}
		})
	}
}

// TestCRDStorageVersionChange: making another version the storage version
// adds it to status.storedVersions; a version stored once cannot leave
// spec.versions until it has left status.storedVersions, which objects
// stored at it still read through.
func TestCRDStorageVersionChange(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	e.CreateCRD(t, gadgetCRD)
	d := e.Dynamic(t)
	crds := d.Resource(e2eutil.CRDGVR)
	for _, name := range []string{"old", "stale"} {
		if _, err := gadgets(d, "v1", ns).Create(e2eutil.Ctx(t), e2eutil.FromYAML(t, "apiVersion: versions.example.com/v1\nkind: Gadget\nmetadata: {name: "+name+"}\nspec: {color: red}\n"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	storedVersions := func(crd *unstructured.Unstructured) []string {
		v, _, _ := unstructured.NestedStringSlice(crd.Object, "status", "storedVersions")
		return v
	}
	crd, err := crds.Get(e2eutil.Ctx(t), "gadgets.versions.example.com", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := storedVersions(crd); !slices.Equal(got, []string{"v1"}) {
		t.Fatalf("storedVersions = %v, want [v1]", got)
	}
	setVersions := func(crd *unstructured.Unstructured, keep func(v map[string]any) bool, storage string) {
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		var out []any
		for _, v := range versions {
			m := v.(map[string]any)
			if keep(m) {
				m["storage"] = m["name"] == storage
				out = append(out, m)
			}
		}
		_ = unstructured.SetNestedSlice(crd.Object, out, "spec", "versions")
	}
	// The storage version of the served resource, as discovery tells it
	// (a hash of it), changes once the server serves the new one.
	disco := discovery.NewDiscoveryClientForConfigOrDie(e.Config)
	storageHash := func() string {
		list, err := disco.ServerResourcesForGroupVersion("versions.example.com/v2")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list.APIResources {
			if r.Name == "gadgets" {
				return r.StorageVersionHash
			}
		}
		t.Fatalf("no gadgets in discovery: %+v", list.APIResources)
		return ""
	}
	hashV1 := storageHash()
	all := func(map[string]any) bool { return true }
	setVersions(crd, all, "v2")
	crd, err = crds.Update(e2eutil.Ctx(t), crd, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := storedVersions(crd); !slices.Equal(got, []string{"v1", "v2"}) {
		t.Fatalf("storedVersions after v2 became the storage version = %v, want [v1 v2]", got)
	}

	// Once served at the new storage version, new writes are stored at v2;
	// the old objects still read at every version.
	e2eutil.Eventually(t, 10*time.Second, "the new storage version served", func(context.Context) (bool, error) {
		return storageHash() != hashV1, nil
	})
	if _, err := gadgets(d, "v1", ns).Create(e2eutil.Ctx(t), e2eutil.FromYAML(t, "apiVersion: versions.example.com/v1\nkind: Gadget\nmetadata: {name: new}\nspec: {color: blue}\n"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"v1", "v2", "v1beta1"} {
		list, err := gadgets(d, v, ns).List(e2eutil.Ctx(t), metav1.ListOptions{})
		if err != nil || len(list.Items) != 3 || list.Items[0].GetAPIVersion() != "versions.example.com/"+v || list.Items[2].GetAPIVersion() != "versions.example.com/"+v {
			t.Fatalf("list at %s = %v, %v", v, list, err)
		}
	}

	// v1 was stored: it stays in spec.versions while storedVersions has it.
	withoutV1 := crd.DeepCopy()
	setVersions(withoutV1, func(v map[string]any) bool { return v["name"] != "v1" }, "v2")
	const movedOut = `Invalid value: "v1": missing from spec.versions; v1 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v1 and removes v1 from status.storedVersions`
	_, err = crds.Update(e2eutil.Ctx(t), withoutV1, metav1.UpdateOptions{})
	s := e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid,
		`CustomResourceDefinition.apiextensions.k8s.io "gadgets.versions.example.com" is invalid: status.storedVersions[0]: `+movedOut)
	e2eutil.WantCause(t, s, metav1.CauseTypeFieldValueInvalid, "status.storedVersions[0]")

	// A storage migration rewrites the objects stored at v1 (an update
	// that changes nothing writes them anew, at v2), then drops v1 from
	// storedVersions through /status; v1 may then go.
	old, err := gadgets(d, "v2", ns).Get(e2eutil.Ctx(t), "old", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	migrated, err := gadgets(d, "v2", ns).Update(e2eutil.Ctx(t), old, metav1.UpdateOptions{})
	if err != nil || migrated.GetResourceVersion() == old.GetResourceVersion() {
		t.Fatalf("migrating update = %v, %v; want a new resourceVersion (rewritten at v2)", migrated, err)
	}
	_ = unstructured.SetNestedStringSlice(crd.Object, []string{"v2"}, "status", "storedVersions")
	crd, err = crds.UpdateStatus(e2eutil.Ctx(t), crd, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := storedVersions(crd); !slices.Equal(got, []string{"v2"}) {
		t.Fatalf("storedVersions = %v, want [v2]", got)
	}
	setVersions(crd, func(v map[string]any) bool { return v["name"] != "v1" }, "v2")
	if _, err := crds.Update(e2eutil.Ctx(t), crd, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("removing v1 once no longer stored: %v", err)
	}
	e2eutil.Eventually(t, 10*time.Second, "v1 no longer served", func(c context.Context) (bool, error) {
		r := e.Do(t, http.MethodGet, "/apis/versions.example.com/v1/namespaces/"+ns+"/gadgets", nil)
		return r.Code == http.StatusNotFound, nil
	})
	// Objects written at v2 read; one left at v1 cannot be converted.
	for _, name := range []string{"old", "new"} {
		if _, err := gadgets(d, "v2", ns).Get(e2eutil.Ctx(t), name, metav1.GetOptions{}); err != nil {
			t.Fatalf("%s, written at v2, after v1 left the CRD: %v", name, err)
		}
	}
	_, err = gadgets(d, "v2", ns).Get(e2eutil.Ctx(t), "stale", metav1.GetOptions{})
	e2eutil.WantStatus(t, err, 500, metav1.StatusReasonInternalError, "")
}
