package schema

import (
	"reflect"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The messages below are kube's, as kubectl shows them after
// `The CustomResourceDefinition "..." is invalid:`.
func TestValidateSchema(t *testing.T) {
	path := SchemaPath(0, false)
	tests := []struct {
		name   string
		schema string
		opts   ValidationOptions
		want   []string
	}{{
		name: "valid",
		schema: `
type: object
properties:
  spec:
    type: object
    properties:
      replicas: {type: integer, default: 1}
      ports:
        type: array
        x-kubernetes-list-type: map
        x-kubernetes-list-map-keys: [port]
        items: {type: object, required: [port], properties: {port: {type: integer}}}
`,
	}, {
		// kube's documentation example of a non-structural schema
		name: "not structural",
		schema: `
properties:
  foo:
    pattern: "abc"
  metadata:
    type: object
    properties:
      name: {type: string, pattern: "^a"}
      finalizers: {type: array, items: {type: string, pattern: "my-finalizer"}}
anyOf:
- properties:
    bar: {type: integer, minimum: 42}
  required: ["bar"]
  description: "foo bar object"
`,
		want: []string{
			"spec.versions[0].schema.openAPIV3Schema.anyOf[0].description: Forbidden: must be empty to be structural",
			"spec.versions[0].schema.openAPIV3Schema.anyOf[0].properties[bar].type: Forbidden: must be empty to be structural",
			"spec.versions[0].schema.openAPIV3Schema.properties[bar]: Required value: because it is defined in spec.versions[0].schema.openAPIV3Schema.anyOf[0].properties[bar]",
			"spec.versions[0].schema.openAPIV3Schema.properties[foo].type: Required value: must not be empty for specified object fields",
			"spec.versions[0].schema.openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified",
			"spec.versions[0].schema.openAPIV3Schema.type: Required value: must not be empty at the root",
		},
	}, {
		name:   "unsupported OpenAPI",
		schema: `{type: object, properties: {a: {$ref: "#/x"}, b: {type: array, uniqueItems: true, items: {type: string}}, c: {type: "null"}}}`,
		want: []string{
			"spec.versions[0].schema.openAPIV3Schema.properties[a].$ref: Forbidden: $ref is not supported",
			"spec.versions[0].schema.openAPIV3Schema.properties[b].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
			"spec.versions[0].schema.openAPIV3Schema.properties[c].type: Forbidden: type cannot be set to null, use nullable as an alternative",
			`spec.versions[0].schema.openAPIV3Schema.properties[c].type: Unsupported value: "null": supported values: "array", "boolean", "integer", "number", "object", "string"`,
		},
	}, {
		name:   "conversion error shows only alone",
		schema: `{type: object, $schema: "http://json-schema.org/draft-04/schema#"}`,
		want:   []string{`spec.versions[0].schema.openAPIV3Schema: Invalid value: "": OpenAPIV3Schema 'schema' is not supported`},
	}, {
		name:   "properties and additionalProperties",
		schema: `{type: object, properties: {m: {type: object, properties: {a: {type: string}}, additionalProperties: {type: string}}}}`,
		want:   []string{"spec.versions[0].schema.openAPIV3Schema.properties[m].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"},
	}, {
		name:   "unpruned and invalid defaults",
		schema: `{type: object, properties: {spec: {type: object, default: {a: 1, b: 2}, properties: {a: {type: string, default: 5}}}}}`,
		want: []string{
			`spec.versions[0].schema.openAPIV3Schema.properties[spec].default.a: Invalid value: "integer": a in body must be of type string: "integer"`,
			`spec.versions[0].schema.openAPIV3Schema.properties[spec].default: Invalid value: {"a":1,"b":2}: must not have unknown fields`,
			`spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[a].default: Invalid value: "integer":  in body must be of type string: "integer"`,
		},
	}, {
		name:   "top-level meta defaults",
		schema: `{type: object, properties: {kind: {type: string, default: Foo}}}`,
		want:   []string{"spec.versions[0].schema.openAPIV3Schema.properties[kind].default: Forbidden: must not be set in top-level kind"},
	}, {
		name:   "status subresource limits the root",
		schema: `{type: object, anyOf: [{required: [spec]}], properties: {spec: {type: object}}}`,
		opts:   ValidationOptions{StatusSubresource: true},
		want:   []string{`spec.versions[0].schema.openAPIV3Schema: Invalid value: {"ID":"","Schema":"","Ref":null,"Description":"","Type":"object","Nullable":false,"Format":"","Title":"","Default":null,"Maximum":null,"ExclusiveMaximum":false,"Minimum":null,"ExclusiveMinimum":false,"MaxLength":null,"MinLength":null,"Pattern":"","MaxItems":null,"MinItems":null,"UniqueItems":false,"MultipleOf":null,"Enum":null,"MaxProperties":null,"MinProperties":null,"Required":null,"Items":null,"AllOf":null,"OneOf":null,"AnyOf":[{"ID":"","Schema":"","Ref":null,"Description":"","Type":"","Nullable":false,"Format":"","Title":"","Default":null,"Maximum":null,"ExclusiveMaximum":false,"Minimum":null,"ExclusiveMinimum":false,"MaxLength":null,"MinLength":null,"Pattern":"","MaxItems":null,"MinItems":null,"UniqueItems":false,"MultipleOf":null,"Enum":null,"MaxProperties":null,"MinProperties":null,"Required":["spec"],"Items":null,"AllOf":null,"OneOf":null,"AnyOf":null,"Not":null,"Properties":null,"AdditionalProperties":null,"PatternProperties":null,"Dependencies":null,"AdditionalItems":null,"Definitions":null,"ExternalDocs":null,"Example":null,"XPreserveUnknownFields":null,"XEmbeddedResource":false,"XIntOrString":false,"XListMapKeys":null,"XListType":null,"XMapType":null,"XValidations":null}],"Not":null,"Properties":{"spec":{"ID":"","Schema":"","Ref":null,"Description":"","Type":"object","Nullable":false,"Format":"","Title":"","Default":null,"Maximum":null,"ExclusiveMaximum":false,"Minimum":null,"ExclusiveMinimum":false,"MaxLength":null,"MinLength":null,"Pattern":"","MaxItems":null,"MinItems":null,"UniqueItems":false,"MultipleOf":null,"Enum":null,"MaxProperties":null,"MinProperties":null,"Required":null,"Items":null,"AllOf":null,"OneOf":null,"AnyOf":null,"Not":null,"Properties":null,"AdditionalProperties":null,"PatternProperties":null,"Dependencies":null,"AdditionalItems":null,"Definitions":null,"ExternalDocs":null,"Example":null,"XPreserveUnknownFields":null,"XEmbeddedResource":false,"XIntOrString":false,"XListMapKeys":null,"XListType":null,"XMapType":null,"XValidations":null}},"AdditionalProperties":null,"PatternProperties":null,"Dependencies":null,"AdditionalItems":null,"Definitions":null,"ExternalDocs":null,"Example":null,"XPreserveUnknownFields":null,"XEmbeddedResource":false,"XIntOrString":false,"XListMapKeys":null,"XListType":null,"XMapType":null,"XValidations":null}: only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled`},
	}, {
		name: "list and map types",
		schema: `
type: object
properties:
  s: {type: array, x-kubernetes-list-type: set, items: {type: object, properties: {a: {type: string}}}}
  m: {type: array, x-kubernetes-list-type: map, x-kubernetes-list-map-keys: [k], items: {type: object, properties: {k: {type: string, nullable: true}}}}
  o: {type: string, x-kubernetes-map-type: atomic}
`,
		want: []string{
			"spec.versions[0].schema.openAPIV3Schema.properties[m].items.properties[k].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
			"spec.versions[0].schema.openAPIV3Schema.properties[m].items.properties[k].nullable: Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
			`spec.versions[0].schema.openAPIV3Schema.properties[o].type: Invalid value: "string": must be object if x-kubernetes-map-type is specified`,
			"spec.versions[0].schema.openAPIV3Schema.properties[s].items.x-kubernetes-map-type: Invalid value: null: must be atomic as item of a list with x-kubernetes-list-type=set",
		},
	}, {
		name:   "ratcheted",
		schema: `{type: object, properties: {a: {type: foo}, s: {type: array, x-kubernetes-list-type: set, items: {type: object}}}}`,
		opts:   ValidationOptions{AllowInvalidTypes: true, AllowNonAtomicSetItems: true},
	}, {
		name: "rules",
		schema: `
type: object
x-kubernetes-validations:
- rule: ""
- rule: "self.a == 1\n"
- rule: "true"
  reason: Wrong
  fieldPath: ".b"
properties:
  a: {type: integer}
`,
		want: []string{
			`spec.versions[0].schema.openAPIV3Schema.x-kubernetes-validations[0].rule: Required value: rule is not specified`,
			`spec.versions[0].schema.openAPIV3Schema.x-kubernetes-validations[2].fieldPath: Invalid value: ".b": must be a valid path`,
			`spec.versions[0].schema.openAPIV3Schema.x-kubernetes-validations[2].reason: Unsupported value: "Wrong": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := errorStrings(ValidateSchema(props(t, tt.schema), path, tt.opts))
			if !reflect.DeepEqual(got, emptyIfNil(tt.want)) {
				t.Errorf("got:\n%q\nwant:\n%q", got, tt.want)
			}
		})
	}
}

func TestValidateSchemaDefaultHook(t *testing.T) {
	var seen []string
	opts := ValidationOptions{ValidateDefault: func(p *field.Path, s *Structural, root bool, v any) field.ErrorList {
		seen = append(seen, p.String())
		if s.Type == "integer" && v.(int64) > 5 {
			return field.ErrorList{field.Invalid(p, v, "too big for the rule")}
		}
		return nil
	}}
	errs := ValidateSchema(props(t, `{type: object, properties: {a: {type: integer, default: 7}, b: {type: string, default: x}, c: {type: string, default: 1}}}`), field.NewPath("s"), opts)
	want := []string{
		`s.properties[a].default: Invalid value: 7: too big for the rule`,
		`s.properties[c].default: Invalid value: "integer":  in body must be of type string: "integer"`,
	}
	if got := errorStrings(errs); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	// c's default fails the schema, so its rules are not run
	if want := []string{"s.properties[a].default", "s.properties[b].default"}; !reflect.DeepEqual(seen, want) {
		t.Errorf("hook saw %q, want %q", seen, want)
	}
}

func TestRatchetOptions(t *testing.T) {
	tests := []struct {
		name string
		old  string
		want ValidationOptions
	}{
		{"clean", `{type: object, properties: {a: {type: string, default: x}}}`, ValidationOptions{}},
		{"invalid type", `{type: object, properties: {a: {type: foo}}}`, ValidationOptions{AllowInvalidTypes: true}},
		{"unpruned default", `{type: object, properties: {a: {type: object, default: {x: 1}}}}`, ValidationOptions{AllowUnprunedDefaults: true}},
		{"set of objects", `{type: object, properties: {a: {type: array, x-kubernetes-list-type: set, items: {type: object}}}}`, ValidationOptions{AllowNonAtomicSetItems: true}},
		{"optional map key", `{type: object, properties: {a: {type: array, x-kubernetes-list-type: map, x-kubernetes-list-map-keys: [k], items: {type: object, properties: {k: {type: string}}}}}}`, ValidationOptions{AllowInvalidListMapKeys: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RatchetOptions(nil, props(t, tt.old)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSchemaPath(t *testing.T) {
	if got := SchemaPath(2, false).String(); got != "spec.versions[2].schema.openAPIV3Schema" {
		t.Errorf("got %s", got)
	}
	if got := SchemaPath(2, true).String(); got != "spec.validation.openAPIV3Schema" {
		t.Errorf("got %s", got)
	}
}

func TestWarnings(t *testing.T) {
	s := props(t, `
type: object
properties:
  a: {type: string, format: my-format}
  b: {type: integer, format: int32}
  c: {type: number, format: int32}
  d: {type: array, x-kubernetes-list-type: set, items: {type: object, x-kubernetes-map-type: atomic}}
  e: {type: string, format: date-time}
`)
	want := []string{
		`unrecognized format "my-format"`,
		`unrecognized format "int32"`,
		`x-kubernetes-list-type: set for items of type "object" is not supported by server-side apply or CEL validation rules`,
	}
	if got := Warnings(s); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	old := props(t, `{type: object, properties: {a: {type: string, format: my-format}}}`)
	want = []string{
		`unrecognized format "int32"`,
		`x-kubernetes-list-type: set for items of type "object" is not supported by server-side apply or CEL validation rules`,
	}
	if got := NewWarnings([]*apiextv1.JSONSchemaProps{old}, []*apiextv1.JSONSchemaProps{s}); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
