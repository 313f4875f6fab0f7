package schema

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	builderutil "k8s.io/kube-openapi/pkg/builder3/util"
	"sigs.k8s.io/yaml"
)

// testdata/kube_cases.yaml are CRD schemas with custom resources and
// updates; testdata/kube_expected.json is what kube-apiserver 1.37's own
// packages answer for them (recorded outside this module, with a one-CRD
// version "v1" of group example.com, kind Foo, whose schema kube hoists to
// spec.validation): CRD validation errors (create, and update from
// oldSchema), for each object the pruned paths, the metadata coercion
// result, the object after pruning nulls, coercion and defaulting, the
// validation errors of that object and of the raw object, the ratcheting
// update errors, and the published v2 and v3 models.

type goldenCase struct {
	Name      string           `json:"name"`
	Status    bool             `json:"status"`
	Schema    json.RawMessage  `json:"schema"`
	OldSchema json.RawMessage  `json:"oldSchema"`
	Objects   []map[string]any `json:"objects"`
	Updates   []struct {
		Old map[string]any `json:"old"`
		New map[string]any `json:"new"`
	} `json:"updates"`
	OpenAPI bool `json:"openapi"`
}

type goldenObject struct {
	Pruned    []string       `json:"pruned"`
	Coerce    string         `json:"coerce"`
	Defaulted map[string]any `json:"defaulted"`
	Errors    []string       `json:"errors"`
	RawErrors []string       `json:"rawErrors"`
}

type goldenResult struct {
	SchemaErrors       []string                  `json:"schemaErrors"`
	UpdateSchemaErrors []string                  `json:"updateSchemaErrors"`
	Objects            []goldenObject            `json:"objects"`
	Updates            [][]string                `json:"updates"`
	OpenAPI            map[string]map[string]any `json:"openapi"`
}

func loadGolden(t *testing.T) ([]goldenCase, map[string]goldenResult) {
	t.Helper()
	in, err := os.ReadFile("testdata/kube_cases.yaml")
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(in)
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	if err := utiljson.Unmarshal(js, &cases); err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile("testdata/kube_expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]goldenResult
	if err := utiljson.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	return cases, want
}

func errorStrings(l field.ErrorList) []string {
	out := []string{}
	for _, e := range l {
		out = append(out, e.Error())
	}
	sort.Strings(out)
	return out
}

// asJSON normalizes a value through JSON, as the recording did.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := utiljson.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func emptyIfNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func TestAgainstKube(t *testing.T) {
	cases, want := loadGolden(t)
	schemaPath := field.NewPath("spec", "validation", "openAPIV3Schema")
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			w, ok := want[c.Name]
			if !ok {
				t.Fatalf("no recorded result")
			}
			var props apiextv1.JSONSchemaProps
			if err := json.Unmarshal(c.Schema, &props); err != nil {
				t.Fatal(err)
			}

			got := errorStrings(ValidateSchema(&props, schemaPath, ValidationOptions{StatusSubresource: c.Status}))
			check(t, "schema errors", emptyIfNil(w.SchemaErrors), got)

			if len(c.OldSchema) > 0 {
				var old apiextv1.JSONSchemaProps
				if err := json.Unmarshal(c.OldSchema, &old); err != nil {
					t.Fatal(err)
				}
				opts := RatchetOptions(&old)
				opts.StatusSubresource = c.Status
				got := errorStrings(ValidateSchema(&props, schemaPath, opts))
				check(t, "update schema errors", emptyIfNil(w.UpdateSchemaErrors), got)
			}

			s, err := NewStructural(&props)
			if c.OpenAPI {
				gvk := runtimeschema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Foo"}
				for _, v2 := range []bool{true, false} {
					key := "v3"
					if v2 {
						key = "v2"
					}
					kind := KindSchema(s, gvk, v2, RefPrefix(v2)+ObjectMetaDefinition)
					list := ListSchema(gvk, "FooList", "foos", RefPrefix(v2))
					if !v2 {
						// kube's v3 builder wraps references that have siblings
						kind = *builderutil.WrapRefs(&kind)
						list = *builderutil.WrapRefs(&list)
					}
					wk := w.OpenAPI[key]
					check(t, key+" kind model", asJSON(t, wk["kind"]), asJSON(t, kind))
					check(t, key+" list model", asJSON(t, wk["list"]), asJSON(t, list))
				}
			}
			if err != nil {
				return
			}
			served := s.DeepCopy()
			if err := PruneDefaults(served); err != nil {
				t.Fatalf("PruneDefaults: %v", err)
			}

			for i, o := range c.Objects {
				wo := w.Objects[i]
				obj := copyJSON(o).(map[string]any)
				check(t, fmt.Sprintf("object[%d] pruned", i), emptyIfNil(wo.Pruned), emptyIfNil(Prune(obj, served, true)))
				PruneNonNullableNullsWithoutDefaults(obj, served)
				ferr, paths := CoerceEmbeddedMeta(nil, obj, served, false, CoerceOptions{ReturnUnknownFieldPaths: true})
				check(t, fmt.Sprintf("object[%d] coerce", i), wo.Coerce, fmt.Sprint(ferr, paths))
				Default(obj, served)
				check(t, fmt.Sprintf("object[%d] defaulted", i), asJSON(t, wo.Defaulted), asJSON(t, obj))
				check(t, fmt.Sprintf("object[%d] errors", i), emptyIfNil(wo.Errors), errorStrings(Validate(obj, served, nil)))
				raw := copyJSON(o).(map[string]any)
				check(t, fmt.Sprintf("object[%d] raw errors", i), emptyIfNil(wo.RawErrors), errorStrings(Validate(raw, served, nil)))
			}

			for i, u := range c.Updates {
				check(t, fmt.Sprintf("update[%d] errors", i), emptyIfNil(w.Updates[i]), errorStrings(ValidateUpdate(u.New, u.Old, served, nil)))
			}

		})
	}
}

func check(t *testing.T, what string, want, got any) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		wb, _ := json.MarshalIndent(want, "", "  ")
		gb, _ := json.MarshalIndent(got, "", "  ")
		t.Errorf("%s:\nkube: %s\ngot:  %s", what, wb, gb)
	}
}
