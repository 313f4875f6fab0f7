package schema

import (
	"reflect"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func ptr[T any](v T) *T { return &v }

func TestNewStructural(t *testing.T) {
	tests := []struct {
		name    string
		schema  string
		want    *Structural
		wantErr string
	}{{
		name: "types, defaults and extensions",
		schema: `
type: object
description: d
properties:
  replicas: {type: integer, default: 3, minimum: 1}
  ratio: {type: number, default: 0.5}
  port: {x-kubernetes-int-or-string: true}
  tags: {type: array, items: {type: string}, x-kubernetes-list-type: set}
  labels: {type: object, additionalProperties: {type: string}, x-kubernetes-map-type: granular}
  any: {x-kubernetes-preserve-unknown-fields: true, nullable: true}
required: [replicas]
`,
		want: &Structural{
			Type: "object", Description: "d",
			Properties: map[string]Structural{
				"replicas": {Type: "integer", Default: int64(3), HasDefault: true, ValueValidation: &ValueValidation{Minimum: ptr(1.0)}},
				"ratio":    {Type: "number", Default: 0.5, HasDefault: true, ValueValidation: &ValueValidation{}},
				"port":     {XIntOrString: true, ValueValidation: &ValueValidation{}},
				"tags": {Type: "array", XListType: "set", ValueValidation: &ValueValidation{},
					Items: &Structural{Type: "string", ValueValidation: &ValueValidation{}}},
				"labels": {Type: "object", XMapType: "granular", ValueValidation: &ValueValidation{},
					AdditionalProperties: &Structural{Type: "string", ValueValidation: &ValueValidation{}}},
				"any": {XPreserveUnknownFields: true, Nullable: true, ValueValidation: &ValueValidation{}},
			},
			ValueValidation: &ValueValidation{Required: []string{"replicas"}},
		},
	}, {
		name:   "additionalProperties true and false",
		schema: `{type: object, properties: {a: {type: object, additionalProperties: true}, b: {type: object, additionalProperties: false}}}`,
		want: &Structural{
			Type: "object",
			Properties: map[string]Structural{
				"a": {Type: "object", AdditionalPropertiesAllowed: true, ValueValidation: &ValueValidation{}},
				"b": {Type: "object", AdditionalPropertiesDisallowed: true, ValueValidation: &ValueValidation{}},
			},
			ValueValidation: &ValueValidation{},
		},
	}, {
		name:   "null default is no default",
		schema: `{type: string, default: null, enum: [a, null]}`,
		want:   &Structural{Type: "string", ValueValidation: &ValueValidation{Enum: []any{"a", nil}}},
	}, {
		name:   "junctors keep what they may not say",
		schema: `{x-kubernetes-int-or-string: true, anyOf: [{type: integer}, {type: string, description: s}], not: {maxLength: 2}}`,
		want: &Structural{XIntOrString: true, ValueValidation: &ValueValidation{
			AnyOf: []NestedValueValidation{{ForbiddenGenerics: Generic{Type: "integer"}}, {ForbiddenGenerics: Generic{Type: "string", Description: "s"}}},
			Not:   &NestedValueValidation{ValueValidation: ValueValidation{MaxLength: ptr(int64(2))}},
		}},
	}, {
		name:    "$ref",
		schema:  `{type: object, properties: {a: {$ref: "#/definitions/a"}}}`,
		wantErr: "OpenAPIV3Schema '$ref' is not supported",
	}, {
		name:    "items array",
		schema:  `{type: array, items: [{type: string}]}`,
		wantErr: "OpenAPIV3Schema 'items' must be a schema, but is an array",
	}, {
		name:    "definitions in a junctor",
		schema:  `{type: object, allOf: [{definitions: {a: {type: string}}}]}`,
		wantErr: "OpenAPIV3Schema 'definitions' is not supported",
	}, {
		name:    "preserve unknown fields false",
		schema:  `{type: object, x-kubernetes-preserve-unknown-fields: false}`,
		wantErr: "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NewStructural(props(t, tt.schema))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// Format is kept in both places; the table leaves it out.
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %#v\nwant %#v", got, tt.want)
			}
		})
	}
	if s, err := NewStructural(nil); s != nil || err != nil {
		t.Errorf("NewStructural(nil) = %v, %v", s, err)
	}
}

func TestDeepCopy(t *testing.T) {
	s := structural(t, `
type: object
properties:
  a: {type: object, default: {x: [1]}, x-kubernetes-validations: [{rule: "true", reason: FieldValueInvalid}]}
  l: {type: array, items: {type: string, enum: [a]}, x-kubernetes-list-map-keys: [k]}
allOf: [{properties: {a: {maxProperties: 1}}}]
`)
	c := s.DeepCopy()
	if !reflect.DeepEqual(s, c) {
		t.Fatalf("copy differs")
	}
	a := c.Properties["a"]
	a.Default.(map[string]any)["x"].([]any)[0] = int64(2)
	*a.XValidations[0].Reason = apiextv1.FieldValueForbidden
	c.Properties["l"].Items.ValueValidation.Enum[0] = "b"
	c.Properties["l"].XListMapKeys[0] = "j"
	*c.ValueValidation.AllOf[0].Properties["a"].MaxProperties = 5
	if !reflect.DeepEqual(s, structural(t, `
type: object
properties:
  a: {type: object, default: {x: [1]}, x-kubernetes-validations: [{rule: "true", reason: FieldValueInvalid}]}
  l: {type: array, items: {type: string, enum: [a]}, x-kubernetes-list-map-keys: [k]}
allOf: [{properties: {a: {maxProperties: 1}}}]
`)) {
		t.Errorf("changing the copy changed the original")
	}
}
