package schema

import (
	"encoding/json"
	"reflect"
	"testing"

	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
)

func TestToOpenAPI(t *testing.T) {
	s := structural(t, `
type: object
required: [spec]
properties:
  spec:
    type: object
    required: [a, nn]
    properties:
      a: {type: string, default: x, enum: [x, z]}
      nn: {type: object, nullable: true, properties: {x: {type: string}}}
      keep: {type: object, x-kubernetes-preserve-unknown-fields: true, properties: {x: {type: string}}}
      port: {x-kubernetes-int-or-string: true}
      one: {type: object, properties: {a: {type: string}}, oneOf: [{required: [a]}]}
`)
	tests := []struct {
		name string
		v2   bool
		want string
	}{{
		name: "v3",
		want: `{"type":"object","required":["spec"],"properties":{"spec":{"type":"object","required":["a","nn"],"properties":{
			"a":{"type":"string","default":"x","enum":["x","z"]},
			"nn":{"type":"object","nullable":true,"properties":{"x":{"type":"string"}}},
			"keep":{"type":"object","properties":{"x":{"type":"string"}},"x-kubernetes-preserve-unknown-fields":true},
			"port":{"anyOf":[{"type":"integer"},{"type":"string"}],"x-kubernetes-int-or-string":true},
			"one":{"type":"object","properties":{"a":{"type":"string"}},"oneOf":[{"required":["a"]}]}}}}}`,
	}, {
		name: "v2",
		v2:   true,
		want: `{"type":"object","required":["spec"],"properties":{"spec":{"type":"object","required":["a"],"properties":{
			"a":{"type":"string","enum":["x","z"]},
			"nn":{},
			"keep":{"x-kubernetes-preserve-unknown-fields":true},
			"port":{"x-kubernetes-int-or-string":true},
			"one":{"type":"object","properties":{"a":{"type":"string"}}}}}}}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := asJSONString(t, ToOpenAPI(s, tt.v2))
			if !jsonEqual(t, got, tt.want) {
				t.Errorf("got %s\nwant %s", got, tt.want)
			}
		})
	}
	// s itself is left alone
	if s.Properties["spec"].Properties["port"].ValueValidation.AnyOf != nil {
		t.Errorf("ToOpenAPI changed its argument")
	}
}

func TestKindAndListSchema(t *testing.T) {
	gvk := runtimeschema.GroupVersionKind{Group: "stable.example.com", Version: "v1", Kind: "CronTab"}
	if got := DefinitionName(gvk); got != "com.example.stable.v1.CronTab" {
		t.Errorf("DefinitionName = %s", got)
	}
	apiVersion := `{"type":"string","description":"APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"}`
	kind := `{"type":"string","description":"Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"}`
	metadata := `{"$ref":"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta","description":"Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"}`
	gvkExt := `"x-kubernetes-group-version-kind":[{"group":"stable.example.com","kind":"CronTab","version":"v1"}]`

	tests := []struct {
		name   string
		schema string
		v2     bool
		want   string
	}{{
		name:   "with a schema",
		schema: `{type: object, properties: {spec: {type: object, properties: {image: {type: string}}}}}`,
		v2:     true,
		want: `{"type":"object","properties":{"apiVersion":` + apiVersion + `,"kind":` + kind + `,"metadata":` + metadata +
			`,"spec":{"type":"object","properties":{"image":{"type":"string"}}}},` + gvkExt + `}`,
	}, {
		name: "embedded resources get type and object meta",
		schema: `{type: object, properties: {tpl: {type: object, x-kubernetes-embedded-resource: true, required: [kind],
			properties: {spec: {type: object}}}}}`,
		v2: true,
		want: `{"type":"object","properties":{"apiVersion":` + apiVersion + `,"kind":` + kind + `,"metadata":` + metadata +
			`,"tpl":{"type":"object","required":["kind","apiVersion"],"x-kubernetes-embedded-resource":true,"properties":{
			"apiVersion":{"type":"string","description":"apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"},
			"kind":{"type":"string","description":"kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"},
			"metadata":` + metadata + `,"spec":{"type":"object"}}}},` + gvkExt + `}`,
	}, {
		name:   "v2 of a root that keeps unknown fields",
		schema: `{type: object, x-kubernetes-preserve-unknown-fields: true, properties: {spec: {type: object}}}`,
		v2:     true,
		want:   `{"type":"object",` + gvkExt + `}`,
	}, {
		name:   "not structural",
		schema: `{type: object, properties: {spec: {properties: {a: {type: string}}}}}`,
		want:   `{"type":"object",` + gvkExt + `}`,
	}, {
		name: "no schema",
		want: `{"type":"object",` + gvkExt + `}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s *Structural
			if tt.schema != "" {
				s = structural(t, tt.schema)
			}
			got := asJSONString(t, KindSchema(s, gvk, tt.v2, V2RefPrefix+ObjectMetaDefinition))
			if !jsonEqual(t, got, tt.want) {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}

	got := asJSONString(t, ListSchema(gvk, "CronTabList", "crontabs", V3RefPrefix))
	want := `{"type":"object","description":"CronTabList is a list of CronTab","required":["items"],"properties":{
		"apiVersion":` + apiVersion + `,"kind":` + kind + `,
		"items":{"type":"array","description":"List of crontabs. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md","items":{"$ref":"#/components/schemas/com.example.stable.v1.CronTab"}},
		"metadata":{"$ref":"#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta","description":"Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"}},
		"x-kubernetes-group-version-kind":[{"group":"stable.example.com","kind":"CronTabList","version":"v1"}]}`
	if !jsonEqual(t, got, want) {
		t.Errorf("list: got  %s\nwant %s", got, want)
	}
}

func asJSONString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return reflect.DeepEqual(x, y)
}
