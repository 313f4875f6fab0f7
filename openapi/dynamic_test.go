package openapi

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/capstan-io/capstan/apis/scheme"
	"github.com/capstan-io/capstan/endpoints/discovery"
)

func TestDefinitionName(t *testing.T) {
	for gvk, want := range map[schema.GroupVersionKind]string{
		{Group: "stable.example.com", Version: "v1", Kind: "CronTab"}:     "com.example.stable.v1.CronTab",
		{Group: "stable.example.com", Version: "v1", Kind: "CronTabList"}: "com.example.stable.v1.CronTabList",
		{Group: "example", Version: "v2beta1", Kind: "Widget"}:            "example.v2beta1.Widget",
	} {
		if got := DefinitionName(gvk); got != want {
			t.Errorf("DefinitionName(%v) = %q, want %q", gvk, got, want)
		}
	}
}

var cronTabGV = schema.GroupVersion{Group: "stable.example.com", Version: "v1"}

// cronTabGroup is stable.example.com/v1 as the CRD server lists it.
func cronTabGroup() discovery.Group {
	return discovery.Group{Name: cronTabGV.Group, Priority: 1000, Versions: []discovery.Version{{Version: "v1", Resources: []metav1.APIResource{
		{Name: "crontabs", SingularName: "crontab", Namespaced: true, Kind: "CronTab", Verbs: allVerbs, ShortNames: []string{"ct"}},
		{Name: "crontabs/scale", Namespaced: true, Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: statusVerbs},
		{Name: "crontabs/status", Namespaced: true, Kind: "CronTab", Verbs: statusVerbs},
	}}}}
}

// cronTabKinds are CronTab and CronTabList with a spec of the given
// fields, each a string with a default.
func cronTabKinds(fields ...string) []KindDefinition { return groupKinds(cronTabGV.Group, fields...) }

// groupKinds are CronTab and CronTabList of group/v1.
func groupKinds(group string, fields ...string) []KindDefinition {
	gv := schema.GroupVersion{Group: group, Version: "v1"}
	kind := func(form Form) spec.Schema {
		prefix := "#/definitions/"
		if form == V3 {
			prefix = "#/components/schemas/"
		}
		specProps := map[string]spec.Schema{}
		for _, f := range fields {
			specProps[f] = spec.Schema{SchemaProps: spec.SchemaProps{
				Type: []string{"string"}, Description: "the " + f, Default: "x",
			}}
		}
		s := spec.Schema{SchemaProps: spec.SchemaProps{
			Type: []string{"object"},
			Properties: map[string]spec.Schema{
				"apiVersion": *spec.StringProperty(),
				"kind":       *spec.StringProperty(),
				"metadata":   *spec.RefSchema(prefix + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"),
				"spec":       {SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: specProps}},
			},
		}}
		s.AddExtension(extensionGVK, []any{map[string]any{"group": group, "version": "v1", "kind": "CronTab"}})
		return s
	}
	list := func(form Form) spec.Schema {
		prefix := "#/definitions/"
		if form == V3 {
			prefix = "#/components/schemas/"
		}
		s := spec.Schema{SchemaProps: spec.SchemaProps{
			Type:     []string{"object"},
			Required: []string{"items"},
			Properties: map[string]spec.Schema{
				"items":    *spec.ArrayProperty(spec.RefSchema(prefix + DefinitionName(gv.WithKind("CronTab")))),
				"metadata": *spec.RefSchema(prefix + "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"),
			},
		}}
		s.AddExtension(extensionGVK, []any{map[string]any{"group": group, "version": "v1", "kind": "CronTabList"}})
		return s
	}
	return []KindDefinition{
		{GVK: gv.WithKind("CronTab"), V2: kind(V2), V3: kind(V3),
			Dependencies: []string{"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}},
		{GVK: gv.WithKind("CronTabList"), V2: list(V2), V3: list(V3),
			Dependencies: []string{"io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta", DefinitionName(gv.WithKind("CronTab"))}},
	}
}

// newDynamicService documents the groups with the test catalog and a
// dynamic one.
func newDynamicService(t testing.TB, groups ...discovery.Group) (*Service, *discovery.Registry, *DynamicCatalog) {
	t.Helper()
	reg := discovery.NewRegistry()
	for _, g := range groups {
		reg.Set(g)
	}
	dyn := NewDynamicCatalog()
	s := NewService(Config{
		Registry: reg, Catalog: WithDynamic(catalog, dyn), Serializer: scheme.Codecs, Version: "v1.37.2",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	return s, reg, dyn
}

func TestDynamicV2(t *testing.T) {
	s, _, dyn := newDynamicService(t, coreGroup(), cronTabGroup())
	dyn.Set("crontabs.stable.example.com", cronTabKinds("cronSpec", "image"))
	sw := v2Doc(t, s)

	ct, ok := sw.Definitions["com.example.stable.v1.CronTab"]
	if !ok {
		t.Fatal("no definition of CronTab")
	}
	image := ct.Properties["spec"].Properties["image"]
	if image.Description != "the image" || image.Default != nil {
		t.Errorf("spec.image in v2 = %+v, want described and without default", image.SchemaProps)
	}
	for _, name := range []string{"com.example.stable.v1.CronTabList", "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "io.k8s.api.autoscaling.v1.Scale"} {
		if _, ok := sw.Definitions[name]; !ok {
			t.Errorf("no definition %s", name)
		}
	}
	list := sw.Paths.Paths["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs"].Get
	if list == nil || list.ID != "listStableExampleComV1NamespacedCronTab" {
		t.Fatalf("list of CronTabs = %+v", list)
	}
	if ref := list.Responses.StatusCodeResponses[200].Schema.Ref.String(); ref != "#/definitions/com.example.stable.v1.CronTabList" {
		t.Errorf("the list answers %s", ref)
	}
	if _, ok := sw.Paths.Paths["/apis/stable.example.com/v1/crontabs"]; !ok {
		t.Error("no list of CronTabs across namespaces")
	}
	// What the built-in kinds had is kept.
	if _, ok := sw.Definitions["io.k8s.api.core.v1.ConfigMap"]; !ok {
		t.Error("no definition of ConfigMap")
	}
}

func TestDynamicV3(t *testing.T) {
	s, _, dyn := newDynamicService(t, coreGroup(), cronTabGroup())
	dyn.Set("crontabs.stable.example.com", cronTabKinds("cronSpec"))
	doc := v3Doc(t, s, "apis/stable.example.com/v1")

	ct := doc.Components.Schemas["com.example.stable.v1.CronTab"]
	if ct == nil {
		t.Fatal("no schema of CronTab")
	}
	if d := ct.Properties["spec"].Properties["cronSpec"].Default; d != "x" {
		t.Errorf("spec.cronSpec default in v3 = %v, want x", d)
	}
	want := []any{map[string]any{"group": "stable.example.com", "version": "v1", "kind": "CronTab"}}
	if got := ct.Extensions[extensionGVK]; !reflect.DeepEqual(got, want) {
		t.Errorf("CronTab's kinds = %v, want %v", got, want)
	}
	if doc.Components.Schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"] == nil {
		t.Error("no schema of ObjectMeta")
	}

	item := "/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}"
	patch := doc.Paths.Paths[item].Patch
	if patch == nil {
		t.Fatal("no PATCH of a CronTab")
	}
	var consumes []string
	for ct := range patch.RequestBody.Content {
		consumes = append(consumes, ct)
	}
	slices.Sort(consumes)
	if want := []string{"application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json"}; !slices.Equal(consumes, want) {
		t.Errorf("PATCH of a CronTab consumes %v, want %v", consumes, want)
	}
	if _, ok := patch.Responses.StatusCodeResponses[201]; ok {
		t.Error("PATCH of a CronTab answers 201")
	}
	get := doc.Paths.Paths[item].Get
	var produces []string
	for ct := range get.Responses.StatusCodeResponses[200].Content {
		produces = append(produces, ct)
	}
	slices.Sort(produces)
	if want := []string{"application/json", "application/yaml"}; !slices.Equal(produces, want) {
		t.Errorf("GET of a CronTab produces %v, want %v", produces, want)
	}
	scale := doc.Paths.Paths[item+"/scale"].Put
	if scale == nil || scale.OperationId != "replaceStableExampleComV1NamespacedCronTabScale" {
		t.Fatalf("PUT of a CronTab's scale = %+v", scale)
	}
	gvk := map[string]any{"group": "stable.example.com", "version": "v1", "kind": "CronTab"}
	if got := scale.Extensions[extensionGVK]; !reflect.DeepEqual(got, gvk) {
		t.Errorf("the scale's operation kind = %v, want %v", got, gvk)
	}
	for path := range doc.Paths.Paths {
		if path == "/apis/stable.example.com/v1/" || strings.HasPrefix(path, "/apis/stable.example.com/v1/watch/") {
			t.Errorf("kube does not document %s of custom resources", path)
		}
	}

	root := v3RootPaths(t, s)
	if !root["apis/stable.example.com/v1"] || root["apis/stable.example.com"] {
		t.Errorf("/openapi/v3 lists %v", root)
	}
}

func v3RootPaths(t *testing.T, s *Service) map[string]bool {
	t.Helper()
	doc, err := s.v3Root()
	if err != nil {
		t.Fatal(err)
	}
	var root struct {
		Paths map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(doc.json, &root); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for k := range root.Paths {
		out[k] = true
	}
	return out
}

// A change of a CRD's schema that leaves discovery as it was rebuilds that
// group version's document and /openapi/v2, and nothing else.
func TestDynamicChangeRebuildsItsGroupVersion(t *testing.T) {
	s, _, dyn := newDynamicService(t, coreGroup(), cronTabGroup())
	dyn.Set("crontabs.stable.example.com", cronTabKinds("cronSpec"))
	core1, _, _ := s.v3("api/v1")
	ct1, _, _ := s.v3("apis/stable.example.com/v1")
	v2a, _ := s.v2()

	dyn.Set("crontabs.stable.example.com", cronTabKinds("cronSpec")) // the same
	if ct, _, _ := s.v3("apis/stable.example.com/v1"); ct != ct1 {
		t.Error("setting the same definitions rebuilt the group version")
	}
	if v2, _ := s.v2(); v2 != v2a {
		t.Error("setting the same definitions rebuilt /openapi/v2")
	}

	dyn.Set("crontabs.stable.example.com", cronTabKinds("cronSpec", "replicas"))
	ct2, _, _ := s.v3("apis/stable.example.com/v1")
	if ct2 == ct1 || ct2.etag == ct1.etag {
		t.Fatal("a schema change did not rebuild the group version")
	}
	if got := v3Doc(t, s, "apis/stable.example.com/v1").Components.Schemas["com.example.stable.v1.CronTab"].Properties["spec"].Properties; got["replicas"].Description == "" {
		t.Errorf("the rebuilt document's spec is %v", got)
	}
	if core2, _, _ := s.v3("api/v1"); core2 != core1 {
		t.Error("a CRD's schema change rebuilt api/v1")
	}
	if v2b, _ := s.v2(); v2b == v2a || v2b.etag == v2a.etag {
		t.Error("a schema change did not rebuild /openapi/v2")
	}

	// Withdrawn, the kinds are left out even while discovery lists them.
	dyn.Remove("crontabs.stable.example.com")
	doc := v3Doc(t, s, "apis/stable.example.com/v1")
	if _, ok := doc.Paths.Paths["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs"]; ok {
		t.Error("a removed kind is still documented")
	}
	if _, ok := v2Doc(t, s).Definitions["com.example.stable.v1.CronTab"]; ok {
		t.Error("a removed kind is still defined in /openapi/v2")
	}
	if core3, _, _ := s.v3("api/v1"); core3 != core1 {
		t.Error("removing a CRD's kinds rebuilt api/v1")
	}
}

// Each owner's kinds come and go on their own; a group version stays
// custom while one of its kinds is published.
func TestDynamicOwners(t *testing.T) {
	dyn := NewDynamicCatalog()
	u := WithDynamic(catalog, dyn)
	if Dynamic(u) != dyn || Dynamic(dyn) != dyn || Dynamic(catalog) != nil {
		t.Fatal("Dynamic does not find the dynamic catalog")
	}
	other := schema.GroupVersion{Group: cronTabGV.Group, Version: "v1"}.WithKind("Widget")
	dyn.Set("crontabs", cronTabKinds("a"))
	dyn.Set("widgets", []KindDefinition{{GVK: other, V2: *spec.StringProperty(), V3: *spec.StringProperty()}})

	if name, err := u.Name(other); err != nil || name != "com.example.stable.v1.Widget" {
		t.Errorf("Name(Widget) = %q, %v", name, err)
	}
	if name, err := u.Name(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}); err != nil || name != "io.k8s.api.core.v1.ConfigMap" {
		t.Errorf("Name(ConfigMap) = %q, %v", name, err)
	}
	if _, err := u.Name(cronTabGV.WithKind("Gadget")); err == nil {
		t.Error("a kind nobody published has a name")
	}
	stamp := dyn.stamp(cronTabGV)
	dyn.Remove("crontabs")
	if s := dyn.stamp(cronTabGV); s == 0 || s == stamp {
		t.Errorf("the group version's stamp after removing one owner = %d (was %d)", s, stamp)
	}
	if _, err := u.Name(cronTabGV.WithKind("CronTab")); err == nil {
		t.Error("a removed kind still has a name")
	}
	if _, ok := u.Definitions(V3)["com.example.stable.v1.Widget"]; !ok {
		t.Error("removing one owner removed another's kind")
	}
	dyn.Remove("widgets")
	if s := dyn.stamp(cronTabGV); s != 0 {
		t.Errorf("a group version without kinds has stamp %d", s)
	}
	if len(dyn.Definitions(V2)) != 0 {
		t.Errorf("definitions left: %v", dyn.Definitions(V2))
	}
}

// Definitions makes its map again only after a change: builds and route
// lookups ask for it all the time.
func TestDynamicDefinitionsCached(t *testing.T) {
	dyn := NewDynamicCatalog()
	u := WithDynamic(catalog, dyn)
	for i := range 100 {
		dyn.Set(fmt.Sprintf("crd%d", i), []KindDefinition{{GVK: schema.GroupVersionKind{Group: fmt.Sprintf("g%d.example.com", i), Version: "v1", Kind: "K"}}})
	}
	a := u.Definitions(V3)
	if b := u.Definitions(V3); reflect.ValueOf(a).Pointer() != reflect.ValueOf(b).Pointer() {
		t.Error("Definitions made a new map without a change")
	}
	if want := len(catalog.Definitions(V3)) + 100; len(a) != want {
		t.Errorf("%d definitions, want %d", len(a), want)
	}
	dyn.Remove("crd7")
	b := u.Definitions(V3)
	if _, ok := b["com.example.g7.v1.K"]; ok || len(b) != len(a)-1 {
		t.Errorf("after a removal: %d definitions (was %d)", len(b), len(a))
	}
	if _, ok := a["com.example.g7.v1.K"]; !ok {
		t.Error("a map handed out earlier was changed")
	}
}

// BenchmarkDynamicSet publishes a CRD's kinds among 1,000 others, then
// asks for the definitions, as a document build does.
func BenchmarkDynamicSet(b *testing.B) {
	dyn := NewDynamicCatalog()
	u := WithDynamic(catalog, dyn)
	for i := range 1000 {
		dyn.Set(fmt.Sprintf("crd%d", i), groupKinds(fmt.Sprintf("g%d.example.com", i), "a", "b", "c"))
	}
	u.Definitions(V3)
	i := 0
	for b.Loop() {
		i++
		dyn.Set("crd0", groupKinds("g0.example.com", fmt.Sprint("f", i)))
		u.Definitions(V3)
	}
}

// CRDs change while documents are built and served.
func TestDynamicConcurrentChanges(t *testing.T) {
	s, _, dyn := newDynamicService(t, coreGroup(), cronTabGroup())
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch i % 3 {
			case 0:
				dyn.Set("crontabs.stable.example.com", cronTabKinds(fmt.Sprint("f", i)))
			case 1:
				dyn.Remove("crontabs.stable.example.com")
			}
			if _, err := s.v2(); err != nil {
				t.Error(err)
			}
			if _, err := s.v3Root(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	dyn.Set("crontabs.stable.example.com", cronTabKinds("last"))
	if _, ok := v3Doc(t, s, "apis/stable.example.com/v1").Components.Schemas["com.example.stable.v1.CronTab"].Properties["spec"].Properties["last"]; !ok {
		t.Error("the last change is not documented")
	}
}

// BenchmarkDynamicRebuild changes one CRD's schema among 1,000 and builds
// its group version's document again.
func BenchmarkDynamicRebuild(b *testing.B) {
	s, reg, dyn := newDynamicService(b, coreGroup())
	for i := range 1000 {
		g := cronTabGroup()
		g.Name = fmt.Sprintf("g%d.example.com", i)
		reg.Set(g)
		dyn.Set(g.Name, groupKinds(g.Name, "a"))
	}
	key := "apis/g0.example.com/v1"
	if _, _, err := s.v3(key); err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		i++
		dyn.Set("g0.example.com", groupKinds("g0.example.com", fmt.Sprint("f", i)))
		if _, _, err := s.v3(key); err != nil {
			b.Fatal(err)
		}
	}
}

// SetLazy publishes kinds whose definitions are made only when needed,
// and a group version's definitions make only that group version's.
func TestDynamicCatalogLazy(t *testing.T) {
	c := NewDynamicCatalog()
	made := map[string]int{}
	lazy := func(group string) {
		kinds := groupKinds(group, "cron")
		c.SetLazy(group, "k1", []schema.GroupVersionKind{kinds[0].GVK, kinds[1].GVK}, func() []KindDefinition {
			made[group]++
			return groupKinds(group, "cron")
		})
	}
	lazy("a.example.com")
	lazy("b.example.com")
	if len(made) != 0 {
		t.Fatalf("definitions made at publication: %v", made)
	}
	gvk := schema.GroupVersionKind{Group: "a.example.com", Version: "v1", Kind: "CronTab"}
	if name, err := c.Name(gvk); err != nil || name != "com.example.a.v1.CronTab" {
		t.Fatalf("Name(%v) = %q, %v", gvk, name, err)
	}
	if c.stamp(gvk.GroupVersion()) == 0 {
		t.Fatal("a lazy group version is not custom")
	}

	defs := c.groupVersionDefinitions(V3, gvk.GroupVersion())
	if _, ok := defs["com.example.a.v1.CronTabList"]; !ok || len(defs) != 2 {
		t.Errorf("group version definitions = %v, want a's two kinds", slices.Sorted(maps.Keys(defs)))
	}
	if made["a.example.com"] != 1 || made["b.example.com"] != 0 {
		t.Errorf("made %v, want a's once and not b's", made)
	}

	gen := c.Generation()
	lazy("a.example.com") // the same key: nothing changes
	if c.Generation() != gen {
		t.Error("setting the same key again changed the catalog")
	}
	if all := c.Definitions(V2); len(all) != 4 {
		t.Errorf("Definitions(V2) has %d definitions, want 4", len(all))
	}
	if made["b.example.com"] != 1 {
		t.Errorf("b's made %d times for every definition, want 1", made["b.example.com"])
	}
	c.Remove("a.example.com")
	if _, err := c.Name(gvk); err == nil {
		t.Error("a removed lazy kind keeps its name")
	}
}
