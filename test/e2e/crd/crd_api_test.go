package crd

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// fruitCRD selects by spec.color and spec.size and prints them.
const fruitCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: fruits.api.example.com}
spec:
  group: api.example.com
  scope: Namespaced
  names: {plural: fruits, singular: fruit, kind: Fruit}
  versions:
  - name: v1
    served: true
    storage: true
    selectableFields:
    - jsonPath: .spec.color
    - jsonPath: .spec.size
    additionalPrinterColumns:
    - {name: Color, type: string, jsonPath: .spec.color}
    - {name: Size, type: integer, jsonPath: .spec.size, priority: 1}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              color: {type: string}
              size: {type: integer}
`

var fruitGVR = schema.GroupVersionResource{Group: "api.example.com", Version: "v1", Resource: "fruits"}

// fruit creates a Fruit; color "" leaves spec.color out.
func fruit(t *testing.T, fruits dynamic.ResourceInterface, name, color string, size int64, labels map[string]string) *unstructured.Unstructured {
	t.Helper()
	spec := map[string]any{"size": size}
	if color != "" {
		spec["color"] = color
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "api.example.com/v1", "kind": "Fruit", "spec": spec}}
	u.SetName(name)
	u.SetLabels(labels)
	out, err := fruits.Create(e2eutil.Ctx(t), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating fruit %s: %v", name, err)
	}
	return out
}

func itemNames(list *unstructured.UnstructuredList) string {
	names := make([]string, len(list.Items))
	for i := range list.Items {
		names[i] = list.Items[i].GetName()
	}
	return strings.Join(names, ",")
}

// TestCRDSelectorsAndPaging: custom resources are listed, watched and
// deleted by label selectors, by field selectors on metadata.name,
// metadata.namespace and the CRD's selectableFields (kube's 400 for other
// fields), and listed in pages.
func TestCRDSelectorsAndPaging(t *testing.T) {
	e := e2eutil.Start(t)
	ns, other := e.Namespace(t), e.Namespace(t)
	e.CreateCRD(t, fruitCRD)
	d := e.Dynamic(t)
	fruits := d.Resource(fruitGVR).Namespace(ns)
	fruit(t, fruits, "apple", "red", 1, map[string]string{"tier": "tree", "taste": "sweet"})
	fruit(t, fruits, "cherry", "red", 2, map[string]string{"tier": "tree", "taste": "sour"})
	fruit(t, fruits, "lime", "green", 3, map[string]string{"tier": "tree"})
	fruit(t, fruits, "melon", "", 4, map[string]string{"tier": "vine", "taste": "sweet"})
	fruit(t, d.Resource(fruitGVR).Namespace(other), "apple", "yellow", 5, map[string]string{"tier": "tree"})

	for _, tt := range []struct {
		label, field, want string
		all                bool // in every namespace
	}{
		{label: "taste=sweet", want: "apple,melon"},
		{label: "tier in (vine),taste", want: "melon"},
		{label: "!taste", want: "lime"},
		{label: "tier=tree,taste!=sour", want: "apple,lime"},
		{field: "metadata.name=cherry", want: "cherry"},
		{field: "metadata.name!=cherry", want: "apple,lime,melon"},
		{field: "spec.color=red", want: "apple,cherry"},
		{field: "spec.color!=red", want: "lime,melon"},
		{field: "spec.color=", want: "melon"}, // a missing field selects as ""
		{field: "spec.size=3", want: "lime"},
		{field: "spec.color=red,metadata.name=cherry", want: "cherry"},
		{label: "tier=tree", field: "spec.color=red", want: "apple,cherry"},
		{field: "metadata.namespace=" + other, want: "apple", all: true},
		{field: "metadata.name=apple", want: "apple,apple", all: true},
		{field: "spec.color=yellow", want: "apple", all: true},
	} {
		var ri dynamic.ResourceInterface = fruits
		if tt.all {
			ri = d.Resource(fruitGVR)
		}
		list, err := ri.List(e2eutil.Ctx(t), metav1.ListOptions{LabelSelector: tt.label, FieldSelector: tt.field})
		if err != nil {
			t.Fatalf("list %q %q: %v", tt.label, tt.field, err)
		}
		if got := itemNames(list); got != tt.want {
			t.Errorf("list labels %q fields %q = %s, want %s", tt.label, tt.field, got, tt.want)
		}
	}

	// Kube's 400s: a field that is neither metadata.name, metadata.namespace
	// nor selectable, for lists, watches and collection deletes alike, and
	// selectors that do not parse.
	path := "/apis/api.example.com/v1/namespaces/" + ns + "/fruits"
	for _, tt := range []struct{ method, query, message string }{
		{http.MethodGet, "?fieldSelector=spec.weight%3D1", "field label not supported: spec.weight"},
		{http.MethodGet, "?watch=true&fieldSelector=spec.weight%3D1", "field label not supported: spec.weight"},
		{http.MethodDelete, "?fieldSelector=spec.weight%3D1", "field label not supported: spec.weight"},
		{http.MethodGet, "?fieldSelector=status.phase%3DReady,spec.color%3Dred", "field label not supported: status.phase"},
		{http.MethodGet, "?fieldSelector=spec.color", "invalid selector: 'spec.color'; can't understand 'spec.color'"},
		{http.MethodGet, "?labelSelector=a%20b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"},
		// Options that do not decode are refused before the field is.
		{http.MethodGet, "?limit=abc&fieldSelector=spec.weight%3D1", `strconv.ParseInt: parsing "abc": invalid syntax`},
	} {
		e.Do(t, tt.method, path+tt.query, nil).WantStatus(t, 400, metav1.StatusReasonBadRequest, tt.message)
	}
	// So are options that do not validate.
	e.Do(t, http.MethodGet, path+"?resourceVersionMatch=Exact&fieldSelector=spec.weight%3D1", nil).WantStatus(t, 422, metav1.StatusReasonInvalid,
		`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided`)
	e.Do(t, http.MethodGet, path+"?watch=true&sendInitialEvents=true&fieldSelector=spec.weight%3D1", nil).WantStatus(t, 422, metav1.StatusReasonInvalid,
		`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan`)
	// A cluster-scoped resource has no metadata.namespace to select by.
	e.CreateCRD(t, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: orchards.api.example.com}
spec:
  group: api.example.com
  scope: Cluster
  names: {plural: orchards, singular: orchard, kind: Orchard}
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
`)
	e.Do(t, http.MethodGet, "/apis/api.example.com/v1/orchards?fieldSelector=metadata.namespace%3Dx", nil).
		WantStatus(t, 400, metav1.StatusReasonBadRequest, "field label not supported: metadata.namespace")

	// A watch filters by both selectors: the objects that match first (a
	// watch without resourceVersion starts with them), then the new ones
	// that match.
	w, err := fruits.Watch(e2eutil.Ctx(t), metav1.ListOptions{LabelSelector: "tier=tree", FieldSelector: "spec.color=red"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	fruit(t, fruits, "grape", "green", 6, map[string]string{"tier": "tree"})
	fruit(t, fruits, "currant", "red", 7, map[string]string{"tier": "bush"})
	fruit(t, fruits, "plum", "red", 8, map[string]string{"tier": "tree"})
	var watched []string
	for len(watched) < 3 {
		ev := e2eutil.NextEvent(t, w)
		if ev.Type != watch.Added {
			t.Fatalf("event %s %v, want ADDED", ev.Type, ev.Object)
		}
		watched = append(watched, ev.Object.(*unstructured.Unstructured).GetName())
	}
	if slices.Sort(watched[:2]); !slices.Equal(watched, []string{"apple", "cherry", "plum"}) {
		t.Fatalf("watched %v, want apple and cherry, then plum", watched)
	}

	// Pages of two, by limit and continue, with kube's remainingItemCount.
	var pages []string
	opts := metav1.ListOptions{Limit: 2}
	for i := 0; ; i++ {
		page, err := fruits.List(e2eutil.Ctx(t), opts)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, itemNames(page))
		remaining := page.GetRemainingItemCount()
		if page.GetContinue() == "" {
			if remaining != nil {
				t.Errorf("last page has remainingItemCount %d", *remaining)
			}
			break
		}
		if want := int64(7 - 2*(i+1)); remaining == nil || *remaining != want {
			t.Errorf("page %d remainingItemCount = %v, want %d", i, remaining, want)
		}
		opts.Continue = page.GetContinue()
	}
	if got := strings.Join(pages, " | "); got != "apple,cherry | currant,grape | lime,melon | plum" {
		t.Fatalf("pages = %s", got)
	}
	// Selectors apply within pages.
	page, err := fruits.List(e2eutil.Ctx(t), metav1.ListOptions{Limit: 1, FieldSelector: "spec.color=red"})
	if err != nil || itemNames(page) != "apple" || page.GetContinue() == "" {
		t.Fatalf("first red page = %v, %v", page, err)
	}
	page, err = fruits.List(e2eutil.Ctx(t), metav1.ListOptions{Limit: 10, FieldSelector: "spec.color=red", Continue: page.GetContinue()})
	if err != nil || itemNames(page) != "cherry,currant,plum" || page.GetContinue() != "" {
		t.Fatalf("rest of the red fruits = %v, %v", page, err)
	}

	// Collection deletes take the selectors too.
	if err := fruits.DeleteCollection(e2eutil.Ctx(t), metav1.DeleteOptions{}, metav1.ListOptions{FieldSelector: "spec.color=red", LabelSelector: "tier=tree"}); err != nil {
		t.Fatal(err)
	}
	list, err := fruits.List(e2eutil.Ctx(t), metav1.ListOptions{})
	if err != nil || itemNames(list) != "currant,grape,lime,melon" {
		t.Fatalf("after deleting red tree fruits: %v, %v", list, err)
	}
}

// TestCRDDryRunAndPatches: a dry-run create answers the object and stores
// nothing; merge and JSON patches change custom resources, and a patch
// that fails changes nothing.
func TestCRDDryRunAndPatches(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	e.CreateCRD(t, fruitCRD)
	d := e.Dynamic(t)
	fruits := d.Resource(fruitGVR).Namespace(ns)
	w, err := fruits.Watch(e2eutil.Ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	t.Run("dry-run create", func(t *testing.T) {
		u := e2eutil.FromYAML(t, "apiVersion: api.example.com/v1\nkind: Fruit\nmetadata: {generateName: dry-}\nspec: {color: blue, size: 9}\n")
		dry, err := fruits.Create(e2eutil.Ctx(t), u, metav1.CreateOptions{DryRun: e2eutil.DryRun})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(dry.GetName(), "dry-") || len(dry.GetName()) != len("dry-")+5 || dry.GetUID() == "" ||
			dry.GetResourceVersion() != "" || dry.GetGeneration() != 1 || dry.GetCreationTimestamp().Time.IsZero() {
			t.Fatalf("dry-run create = %v, want a generated name, uid, generation 1 and no resourceVersion", dry.Object)
		}
		if _, err := fruits.Get(e2eutil.Ctx(t), dry.GetName(), metav1.GetOptions{}); err == nil {
			t.Fatal("the dry-run object was stored")
		}
		if keys := e.KeysWith(t, "/api.example.com/fruits/"); len(keys) > 0 {
			t.Fatalf("dry-run create wrote %v", keys)
		}
		// Invalid input is refused as it would be.
		bad := e2eutil.FromYAML(t, "apiVersion: api.example.com/v1\nkind: Fruit\nmetadata: {name: bad}\nspec: {size: big}\n")
		_, err = fruits.Create(e2eutil.Ctx(t), bad, metav1.CreateOptions{DryRun: e2eutil.DryRun})
		e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid,
			`Fruit.api.example.com "bad" is invalid: spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"`)
	})

	apple := fruit(t, fruits, "apple", "red", 1, map[string]string{"a": "1"})
	if ev := e2eutil.NextEvent(t, w); ev.Type != watch.Added || ev.Object.(*unstructured.Unstructured).GetName() != "apple" {
		t.Fatalf("first event = %s %v, want ADDED apple (nothing for the dry run)", ev.Type, ev.Object)
	}

	t.Run("strict apply of unknown fields", func(t *testing.T) {
		body := []byte("apiVersion: api.example.com/v1\nkind: Fruit\nmetadata: {name: strict}\nunknownField: x\nspec: {color: red}\n")
		_, err := fruits.Patch(e2eutil.Ctx(t), "strict", types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "m", FieldValidation: "Strict"})
		if err == nil || !strings.Contains(err.Error(), ".unknownField: field not declared in schema") {
			t.Fatalf("strict apply with an unknown field: %v, want kube's \"field not declared in schema\"", err)
		}
		if _, err := fruits.Get(e2eutil.Ctx(t), "strict", metav1.GetOptions{}); err == nil {
			t.Fatal("the refused apply was stored")
		}
	})
	t.Run("merge patch", func(t *testing.T) {
		out, err := fruits.Patch(e2eutil.Ctx(t), "apple", types.MergePatchType, []byte(`{"metadata":{"labels":{"a":null,"b":"2"}},"spec":{"color":"green","size":null}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		spec := out.Object["spec"].(map[string]any)
		if !e2eutil.Maps(out.GetLabels(), map[string]string{"b": "2"}) || spec["color"] != "green" || spec["size"] != nil || out.GetGeneration() != 2 {
			t.Fatalf("merge-patched = %v", out.Object)
		}
	})
	t.Run("JSON patch", func(t *testing.T) {
		out, err := fruits.Patch(e2eutil.Ctx(t), "apple", types.JSONPatchType, []byte(`[
			{"op":"test","path":"/spec/color","value":"green"},
			{"op":"add","path":"/spec/size","value":5},
			{"op":"replace","path":"/spec/color","value":"yellow"},
			{"op":"remove","path":"/metadata/labels/b"}]`), metav1.PatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		spec := out.Object["spec"].(map[string]any)
		if len(out.GetLabels()) != 0 || spec["color"] != "yellow" || spec["size"] != int64(5) || out.GetGeneration() != 3 {
			t.Fatalf("JSON-patched = %v", out.Object)
		}
	})
	before, err := fruits.Get(e2eutil.Ctx(t), "apple", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("failing patches", func(t *testing.T) {
		// A test op that fails: kube's 422 (its message is generic, see
		// the report of differences).
		_, err := fruits.Patch(e2eutil.Ctx(t), "apple", types.JSONPatchType, []byte(`[{"op":"test","path":"/spec/color","value":"red"},{"op":"replace","path":"/spec/size","value":6}]`), metav1.PatchOptions{})
		e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, "")
		// A result the schema refuses.
		_, err = fruits.Patch(e2eutil.Ctx(t), "apple", types.MergePatchType, []byte(`{"spec":{"size":"six"}}`), metav1.PatchOptions{})
		e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid,
			`Fruit.api.example.com "apple" is invalid: spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"`)
		_, err = fruits.Patch(e2eutil.Ctx(t), "pear", types.MergePatchType, []byte(`{"spec":{"size":6}}`), metav1.PatchOptions{})
		e2eutil.WantStatus(t, err, 404, metav1.StatusReasonNotFound, `fruits.api.example.com "pear" not found`)
		_, err = fruits.Patch(e2eutil.Ctx(t), "apple", types.JSONPatchType, []byte(`{"op":"add"}`), metav1.PatchOptions{})
		e2eutil.WantStatus(t, err, 400, metav1.StatusReasonBadRequest, "")
	})
	after, err := fruits.Get(e2eutil.Ctx(t), "apple", metav1.GetOptions{})
	if err != nil || after.GetResourceVersion() != before.GetResourceVersion() {
		t.Fatalf("after failing patches: %v, %v; want it unchanged", after, err)
	}
	if after.GetUID() != apple.GetUID() {
		t.Fatal("apple was replaced")
	}
}

// TestCRDViews: custom resources as kube's other views show them: Tables
// with the CRD's printer columns, PartialObjectMetadata(List) in JSON and
// in protobuf (client-go's metadata client), and WatchList streams (initial
// events, then the bookmark that ends them).
func TestCRDViews(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	e.CreateCRD(t, fruitCRD)
	d := e.Dynamic(t)
	fruits := d.Resource(fruitGVR).Namespace(ns)
	apple := fruit(t, fruits, "apple", "red", 1, map[string]string{"a": "1"})
	fruit(t, fruits, "melon", "", 4, nil)
	path := "/apis/api.example.com/v1/namespaces/" + ns + "/fruits"

	t.Run("Table", func(t *testing.T) {
		r := e.Do(t, http.MethodGet, path+"?includeObject=None", nil, "Accept", e2eutil.TableAccept)
		var tb metav1.Table
		if err := json.Unmarshal(r.Body, &tb); r.Code != 200 || err != nil || tb.Kind != "Table" || tb.APIVersion != "meta.k8s.io/v1" {
			t.Fatalf("table = %d %.300s", r.Code, r.Body)
		}
		var cols []string
		for _, c := range tb.ColumnDefinitions {
			cols = append(cols, e2eutil.Sprintf("%s:%s:%s:%d", c.Name, c.Type, c.Format, c.Priority))
		}
		if got := strings.Join(cols, " "); got != "Name:string:name:0 Color:string::0 Size:integer::1 Age:date::0" {
			t.Fatalf("columns = %s", got)
		}
		if tb.ColumnDefinitions[1].Description != "Custom resource definition column (in JSONPath format): .spec.color" {
			t.Errorf("Color description = %q", tb.ColumnDefinitions[1].Description)
		}
		if len(tb.Rows) != 2 || tb.Rows[0].Object.Raw != nil {
			t.Fatalf("rows = %+v", tb.Rows)
		}
		apple, melon := tb.Rows[0].Cells, tb.Rows[1].Cells
		if len(apple) != 4 || apple[0] != "apple" || apple[1] != "red" || apple[2] != float64(1) || !strings.HasSuffix(apple[3].(string), "s") {
			t.Errorf("apple row = %v", apple)
		}
		// A column whose path is missing is null.
		if len(melon) != 4 || melon[0] != "melon" || melon[1] != nil || melon[2] != float64(4) {
			t.Errorf("melon row = %v", melon)
		}
		one := e.Do(t, http.MethodGet, path+"/apple", nil, "Accept", e2eutil.TableAccept)
		if err := json.Unmarshal(one.Body, &tb); err != nil || len(tb.Rows) != 1 || tb.Rows[0].Cells[0] != "apple" {
			t.Fatalf("table of one = %d %.300s", one.Code, one.Body)
		}
		var pom metav1.PartialObjectMetadata
		if err := json.Unmarshal(tb.Rows[0].Object.Raw, &pom); err != nil || pom.Kind != "PartialObjectMetadata" || pom.Name != "apple" {
			t.Fatalf("row object = %s", tb.Rows[0].Object.Raw)
		}
	})

	t.Run("PartialObjectMetadata as JSON", func(t *testing.T) {
		r := e.Do(t, http.MethodGet, path, nil, "Accept", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
		var list metav1.PartialObjectMetadataList
		if err := json.Unmarshal(r.Body, &list); r.Code != 200 || err != nil || list.Kind != "PartialObjectMetadataList" ||
			list.APIVersion != "meta.k8s.io/v1" || len(list.Items) != 2 || list.ResourceVersion == "" {
			t.Fatalf("metadata list = %d %.300s", r.Code, r.Body)
		}
		item := list.Items[0]
		if item.Kind != "PartialObjectMetadata" || item.APIVersion != "meta.k8s.io/v1" || item.Name != "apple" || item.Labels["a"] != "1" ||
			item.UID != apple.GetUID() || strings.Contains(string(r.Body), `"spec"`) {
			t.Fatalf("metadata item = %+v", item)
		}
		r = e.Do(t, http.MethodGet, path+"/apple", nil, "Accept", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
		var one metav1.PartialObjectMetadata
		if err := json.Unmarshal(r.Body, &one); r.Code != 200 || err != nil || one.Kind != "PartialObjectMetadata" || one.Name != "apple" {
			t.Fatalf("metadata of one = %d %.300s", r.Code, r.Body)
		}
	})

	t.Run("PartialObjectMetadata as protobuf", func(t *testing.T) {
		seen := &e2eutil.ContentTypes{}
		cfg := rest.CopyConfig(e.Config)
		cfg.Wrap(seen.Wrap)
		mc, err := metadata.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		mfruits := mc.Resource(fruitGVR).Namespace(ns)
		list, err := mfruits.List(e2eutil.Ctx(t), metav1.ListOptions{LabelSelector: "a=1"})
		if err != nil || len(list.Items) != 1 || list.Items[0].Name != "apple" || list.Items[0].UID != apple.GetUID() {
			t.Fatalf("metadata client list = %+v, %v", list, err)
		}
		one, err := mfruits.Get(e2eutil.Ctx(t), "melon", metav1.GetOptions{})
		if err != nil || one.Name != "melon" || one.UID == "" {
			t.Fatalf("metadata client get = %+v, %v", one, err)
		}
		w, err := mfruits.Watch(e2eutil.Ctx(t), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		fruit(t, fruits, "plum", "red", 8, nil)
		ev := e2eutil.NextEvent(t, w)
		if pom, ok := ev.Object.(*metav1.PartialObjectMetadata); ev.Type != watch.Added || !ok || pom.Name != "plum" {
			t.Fatalf("metadata watch event = %s %#v", ev.Type, ev.Object)
		}
		const proto = "application/vnd.kubernetes.protobuf"
		got := seen.List()
		if len(got) != 3 || !slices.Equal(got, []string{proto, proto, proto + ";stream=watch"}) {
			t.Fatalf("answers were %q, want protobuf for list, get and watch", got)
		}
		if err := mfruits.Delete(e2eutil.Ctx(t), "plum", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("WatchList", func(t *testing.T) {
		w, err := fruits.Watch(e2eutil.Ctx(t), metav1.ListOptions{
			SendInitialEvents: ptr.To(true), AllowWatchBookmarks: true,
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, TimeoutSeconds: ptr.To[int64](10),
		})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		var initial []string
		var end *unstructured.Unstructured
		for end == nil {
			ev := e2eutil.NextEvent(t, w)
			obj := ev.Object.(*unstructured.Unstructured)
			switch ev.Type {
			case watch.Added:
				initial = append(initial, obj.GetName())
			case watch.Bookmark:
				end = obj
			default:
				t.Fatalf("event %s %v before the initial events ended", ev.Type, obj)
			}
		}
		slices.Sort(initial)
		if !slices.Equal(initial, []string{"apple", "melon"}) {
			t.Fatalf("initial events for %v, want apple and melon", initial)
		}
		if end.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" || end.GetResourceVersion() == "" ||
			end.GetAPIVersion() != "api.example.com/v1" || end.GetKind() != "Fruit" {
			t.Fatalf("initial events end with %v, want a Fruit bookmark annotated %s", end.Object, metav1.InitialEventsAnnotationKey)
		}
		fruit(t, fruits, "pear", "green", 2, nil)
		if ev := e2eutil.NextEvent(t, w); ev.Type != watch.Added || ev.Object.(*unstructured.Unstructured).GetName() != "pear" {
			t.Fatalf("event after the initial ones = %s %v, want ADDED pear", ev.Type, ev.Object)
		}
		// kube's rule: sendInitialEvents needs NotOlderThan.
		_, err = fruits.Watch(e2eutil.Ctx(t), metav1.ListOptions{SendInitialEvents: ptr.To(true), AllowWatchBookmarks: true})
		s := e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid,
			`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan`)
		e2eutil.WantCause(t, s, metav1.CauseType(field.ErrorTypeForbidden), "resourceVersionMatch")
	})
}
