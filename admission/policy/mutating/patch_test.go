package mutating

import (
	"testing"

	"github.com/google/cel-go/cel"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/admission/policy/expr"
)

// TestJSONPatch: the JSONPatch a CEL expression makes, applied; a failed
// test operation leaves the object as it is.
func TestJSONPatch(t *testing.T) {
	obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"a": "1"}}
	for _, tc := range []struct{ name, expression, want, err string }{
		{"add", `[JSONPatch{op: "add", path: "/data/b", value: "2"}]`, `{"apiVersion":"v1","data":{"a":"1","b":"2"},"kind":"ConfigMap"}`, ""},
		{"replace from object", `[JSONPatch{op: "replace", path: "/data/a", value: object.kind}]`, `{"apiVersion":"v1","data":{"a":"ConfigMap"},"kind":"ConfigMap"}`, ""},
		{"remove", `[JSONPatch{op: "remove", path: "/data"}]`, `{"apiVersion":"v1","kind":"ConfigMap"}`, ""},
		{"failed test", `[JSONPatch{op: "test", path: "/data/a", value: "x"}, JSONPatch{op: "remove", path: "/data"}]`, `{"apiVersion":"v1","data":{"a":"1"},"kind":"ConfigMap"}`, ""},
		{"missing path", `[JSONPatch{op: "replace", path: "/nope/x", value: "1"}]`, "", "JSON Patch: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := expr.NewCompiler(false).Compile(tc.expression, expr.Decls{PatchTypes: true}, true, cel.ListType(cel.ObjectType("JSONPatch")))
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			val, _, err := r.Program.Eval(map[string]any{expr.ObjectVar: obj})
			if err != nil {
				t.Fatal(err)
			}
			got, err := jsonPatch(obj, val)
			if tc.err != "" {
				if err == nil || len(err.Error()) < len(tc.err) || err.Error()[:len(tc.err)] != tc.err {
					t.Fatalf("err %v, want %q...", err, tc.err)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Errorf("got %s, %v\nwant %s", got, err, tc.want)
			}
		})
	}
}

// TestApplyConfigurationWithoutTypes: a resource without types is kube's
// 503.
func TestApplyConfigurationWithoutTypes(t *testing.T) {
	r := expr.NewCompiler(false).Compile(`Object{metadata: Object.metadata{labels: {"a": "b"}}}`, expr.Decls{PatchTypes: true}, true, cel.ObjectType("Object"))
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	val, _, err := r.Program.Eval(map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = applyConfiguration(nil, map[string]any{}, schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, val)
	want := "Resource kind example.com/v1, Kind=Widget not found. There can be a delay between when CustomResourceDefinitions are created and when they are available."
	if err == nil || err.Error() != want {
		t.Errorf("err %v\nwant %s", err, want)
	}
}
