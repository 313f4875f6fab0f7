package v1_test

import (
	"encoding/json"
	"reflect"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"

	apiextv1 "github.com/capstan-io/capstan/apis/apiextensions/v1"
)

func str(s string) *apiextv1.JSONSchemaProps { return &apiextv1.JSONSchemaProps{Type: s} }

type marshalCase struct {
	name string
	in   any
	want string
}

func runMarshal(t *testing.T, tests []marshalCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

type unmarshalCase[T any] struct {
	name    string
	in      string
	want    T
	wantErr bool
}

func runUnmarshal[T any](t *testing.T, tests []unmarshalCase[T]) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got T
			err := utiljson.Unmarshal([]byte(tc.in), &got)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("no error, got %#v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestJSONSchemaPropsOrBoolMarshal(t *testing.T) {
	runMarshal(t, []marshalCase{
		{"zero", apiextv1.JSONSchemaPropsOrBool{}, `false`},
		{"true", apiextv1.JSONSchemaPropsOrBool{Allows: true}, `true`},
		{"schema", apiextv1.JSONSchemaPropsOrBool{Allows: true, Schema: str("string")}, `{"type":"string"}`},
		{"schema wins over false", apiextv1.JSONSchemaPropsOrBool{Schema: str("string")}, `{"type":"string"}`},
		{"empty schema", apiextv1.JSONSchemaPropsOrBool{Schema: &apiextv1.JSONSchemaProps{}}, `{}`},
		{"in a schema", apiextv1.JSONSchemaProps{AdditionalProperties: &apiextv1.JSONSchemaPropsOrBool{}}, `{"additionalProperties":false}`},
		{"nil in a schema", apiextv1.JSONSchemaProps{}, `{}`},
	})
	runUnmarshal(t, []unmarshalCase[apiextv1.JSONSchemaPropsOrBool]{
		{name: "true", in: `true`, want: apiextv1.JSONSchemaPropsOrBool{Allows: true}},
		{name: "false", in: `false`, want: apiextv1.JSONSchemaPropsOrBool{}},
		{name: "schema allows", in: `{"type":"string"}`, want: apiextv1.JSONSchemaPropsOrBool{Allows: true, Schema: str("string")}},
		{name: "empty schema", in: `{}`, want: apiextv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextv1.JSONSchemaProps{}}},
		{name: "null", in: `null`, wantErr: true},
		{name: "string", in: `"true"`, wantErr: true},
		{name: "number", in: `1`, wantErr: true},
		{name: "array", in: `[]`, wantErr: true},
		{name: "bad schema", in: `{"type":1}`, wantErr: true},
	})
	runUnmarshal(t, []unmarshalCase[apiextv1.JSONSchemaProps]{
		{name: "null pointer", in: `{"additionalProperties":null}`, want: apiextv1.JSONSchemaProps{}},
		{name: "false pointer", in: `{"additionalItems":false}`, want: apiextv1.JSONSchemaProps{AdditionalItems: &apiextv1.JSONSchemaPropsOrBool{}}},
		// Nested schemas decode case-sensitively, like the object around them.
		{name: "case-sensitive", in: `{"additionalProperties":{"Type":"string"}}`,
			want: apiextv1.JSONSchemaProps{AdditionalProperties: &apiextv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextv1.JSONSchemaProps{}}}},
	})
}

func TestJSONSchemaPropsOrArrayMarshal(t *testing.T) {
	runMarshal(t, []marshalCase{
		{"zero", apiextv1.JSONSchemaPropsOrArray{}, `null`},
		{"schema", apiextv1.JSONSchemaPropsOrArray{Schema: str("string")}, `{"type":"string"}`},
		{"schemas", apiextv1.JSONSchemaPropsOrArray{JSONSchemas: []apiextv1.JSONSchemaProps{*str("string"), *str("integer")}}, `[{"type":"string"},{"type":"integer"}]`},
		{"schemas win", apiextv1.JSONSchemaPropsOrArray{Schema: str("object"), JSONSchemas: []apiextv1.JSONSchemaProps{*str("string")}}, `[{"type":"string"}]`},
		{"empty schemas", apiextv1.JSONSchemaPropsOrArray{Schema: str("object"), JSONSchemas: []apiextv1.JSONSchemaProps{}}, `{"type":"object"}`},
		{"in a schema", apiextv1.JSONSchemaProps{Items: &apiextv1.JSONSchemaPropsOrArray{}}, `{"items":null}`},
	})
	runUnmarshal(t, []unmarshalCase[apiextv1.JSONSchemaPropsOrArray]{
		{name: "schema", in: `{"type":"string"}`, want: apiextv1.JSONSchemaPropsOrArray{Schema: str("string")}},
		{name: "schemas", in: `[{"type":"string"}]`, want: apiextv1.JSONSchemaPropsOrArray{JSONSchemas: []apiextv1.JSONSchemaProps{*str("string")}}},
		{name: "empty list", in: `[]`, want: apiextv1.JSONSchemaPropsOrArray{JSONSchemas: []apiextv1.JSONSchemaProps{}}},
		{name: "null", in: `null`, want: apiextv1.JSONSchemaPropsOrArray{}},
		{name: "boolean ignored", in: `true`, want: apiextv1.JSONSchemaPropsOrArray{}},
		{name: "string ignored", in: `"x"`, want: apiextv1.JSONSchemaPropsOrArray{}},
		{name: "bad schema", in: `{"type":[]}`, wantErr: true},
		{name: "bad schemas", in: `[1]`, wantErr: true},
	})
}

func TestJSONSchemaPropsOrStringArrayMarshal(t *testing.T) {
	runMarshal(t, []marshalCase{
		{"zero", apiextv1.JSONSchemaPropsOrStringArray{}, `null`},
		{"empty property list", apiextv1.JSONSchemaPropsOrStringArray{Property: []string{}}, `null`},
		{"properties", apiextv1.JSONSchemaPropsOrStringArray{Property: []string{"a", "b"}}, `["a","b"]`},
		{"schema", apiextv1.JSONSchemaPropsOrStringArray{Schema: str("object")}, `{"type":"object"}`},
		{"properties win", apiextv1.JSONSchemaPropsOrStringArray{Schema: str("object"), Property: []string{"a"}}, `["a"]`},
		{"in a schema", apiextv1.JSONSchemaProps{Dependencies: apiextv1.JSONSchemaDependencies{
			"a": {Property: []string{"b"}}, "c": {Schema: str("object")}, "d": {}}},
			`{"dependencies":{"a":["b"],"c":{"type":"object"},"d":null}}`},
	})
	runUnmarshal(t, []unmarshalCase[apiextv1.JSONSchemaPropsOrStringArray]{
		{name: "properties", in: `["a","b"]`, want: apiextv1.JSONSchemaPropsOrStringArray{Property: []string{"a", "b"}}},
		{name: "empty list", in: `[]`, want: apiextv1.JSONSchemaPropsOrStringArray{Property: []string{}}},
		{name: "schema", in: `{"type":"object"}`, want: apiextv1.JSONSchemaPropsOrStringArray{Schema: str("object")}},
		{name: "empty schema", in: `{}`, want: apiextv1.JSONSchemaPropsOrStringArray{Schema: &apiextv1.JSONSchemaProps{}}},
		{name: "null", in: `null`, want: apiextv1.JSONSchemaPropsOrStringArray{}},
		{name: "string ignored", in: `"a"`, want: apiextv1.JSONSchemaPropsOrStringArray{}},
		{name: "bad list", in: `[1]`, wantErr: true},
	})
}

func TestJSONMarshal(t *testing.T) {
	raw := func(s string) apiextv1.JSON { return apiextv1.JSON{Raw: []byte(s)} }
	runMarshal(t, []marshalCase{
		{"zero", apiextv1.JSON{}, `null`},
		{"object", raw(`{"a":1}`), `{"a":1}`},
		{"compacted", raw(`{ "a" : [1, 2] }`), `{"a":[1,2]}`},
		{"large integer kept", raw(`12345678901234567890`), `12345678901234567890`},
		{"in a schema", apiextv1.JSONSchemaProps{Default: &apiextv1.JSON{}, Enum: []apiextv1.JSON{raw(`"a"`), {}}}, `{"default":null,"enum":["a",null]}`},
	})
	runUnmarshal(t, []unmarshalCase[apiextv1.JSON]{
		{name: "string", in: `"a"`, want: raw(`"a"`)},
		{name: "object", in: `{"a": 1}`, want: raw(`{"a": 1}`)},
		{name: "false", in: `false`, want: raw(`false`)},
		{name: "null", in: `null`, want: apiextv1.JSON{}},
	})
	runUnmarshal(t, []unmarshalCase[apiextv1.JSONSchemaProps]{
		// A null default is no default (the pointer stays nil); a null
		// enum value is an enum value without raw bytes.
		{name: "null default", in: `{"default":null}`, want: apiextv1.JSONSchemaProps{}},
		{name: "null in enum", in: `{"enum":[null,1]}`, want: apiextv1.JSONSchemaProps{Enum: []apiextv1.JSON{{}, raw(`1`)}}},
	})

	// Decoding into a value that already holds raw bytes replaces them.
	j := raw(`"old value"`)
	if err := json.Unmarshal([]byte(`1`), &j); err != nil || string(j.Raw) != `1` {
		t.Errorf("got %q, %v; want 1", j.Raw, err)
	}
}
