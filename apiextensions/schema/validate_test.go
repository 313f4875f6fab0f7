package schema

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

var crontabSchema = `
type: object
properties:
  spec:
    type: object
    required: [image]
    properties:
      cronSpec: {type: string, pattern: '^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$'}
      image: {type: string, maxLength: 5}
      replicas: {type: integer, minimum: 1, maximum: 10}
      mode: {type: string, enum: [fast, slow]}
      level: {type: integer, enum: [1, 2]}
      email: {type: string, format: email}
      unknownFormat: {type: string, format: my-format}
      port: {x-kubernetes-int-or-string: true}
      tags: {type: array, maxItems: 2, x-kubernetes-list-type: set, items: {type: string}}
      labels: {type: object, maxProperties: 1, additionalProperties: {type: string}}
      ports:
        type: array
        x-kubernetes-list-type: map
        x-kubernetes-list-map-keys: [port]
        items: {type: object, required: [port], properties: {port: {type: integer}, name: {type: string}}}
      template:
        type: object
        x-kubernetes-embedded-resource: true
        x-kubernetes-preserve-unknown-fields: true
`

func TestValidate(t *testing.T) {
	s := structural(t, crontabSchema)
	tests := []struct {
		name string
		obj  string
		want []string
	}{
		{"valid", `{spec: {image: nginx, replicas: 3, mode: fast, level: 2, email: a@b.c, unknownFormat: "x y", port: 80, tags: [a, b], labels: {a: b}, ports: [{port: 1}, {port: 2}], template: {apiVersion: v1, kind: Pod, metadata: {name: x}}}}`, nil},
		{"types", `{spec: {image: 1, replicas: "3", port: 1.5}}`, []string{
			`spec.image: Invalid value: "integer": spec.image in body must be of type string: "integer"`,
			`spec.port: Invalid value: "number": spec.port in body must be of type integer,string: "number"`,
			`spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`,
		}},
		{"required and bounds", `{spec: {replicas: 11, cronSpec: "x"}}`, []string{
			`spec.cronSpec: Invalid value: "x": spec.cronSpec in body should match '^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$'`,
			`spec.image: Required value`,
			`spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10`,
		}},
		{"enum, lengths, formats", `{spec: {image: toolong, mode: medium, level: 3, email: nope, tags: [a, b, c], labels: {a: b, c: d}}}`, []string{
			`spec.email: Invalid value: "nope": spec.email in body must be of type email: "nope"`,
			`spec.image: Too long: may not be more than 5 bytes`,
			`spec.labels: Too many: 2: must have at most 1 item`,
			`spec.level: Unsupported value: 3: supported values: "1", "2"`,
			`spec.mode: Unsupported value: "medium": supported values: "fast", "slow"`,
			`spec.tags: Too many: 3: must have at most 2 items`,
		}},
		{"list sets and maps", `{spec: {image: a, tags: [a, a], ports: [{port: 1}, {port: 1, name: x}]}}`, []string{
			`spec.ports[1]: Duplicate value: {"port":1}`,
			`spec.tags[1]: Duplicate value: "a"`,
		}},
		{"embedded resource", `{spec: {image: a, template: {kind: pod_x, metadata: {name: "a/b", labels: {"a b": c}}}}}`, []string{
			`spec.template.apiVersion: Required value`,
			`spec.template.kind: Invalid value: "pod_x": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
			`spec.template.metadata.labels: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
			`spec.template.metadata.name: Invalid value: "a/b": may not contain '/'`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := errorStrings(Validate(object(t, tt.obj), s, nil))
			if !reflect.DeepEqual(got, emptyIfNil(tt.want)) {
				t.Errorf("got:\n%q\nwant:\n%q", got, tt.want)
			}
		})
	}
}

func TestValidatorStatus(t *testing.T) {
	s := structural(t, `{type: object, properties: {status: {type: object, properties: {replicas: {type: integer}}}}}`)
	status := s.Properties["status"]
	v := NewValidator(&status)
	got := errorStrings(v.Validate(value(t, `{replicas: x}`), field.NewPath("status")))
	want := []string{`status.replicas: Invalid value: "string": replicas in body must be of type integer: "string"`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if errs := NewValidator(nil).Validate(value(t, `{anything: 1}`), nil); len(errs) != 0 {
		t.Errorf("nil schema: %v", errs)
	}
}

func TestValidateUpdate(t *testing.T) {
	s := structural(t, `
type: object
properties:
  spec:
    type: object
    properties:
      name: {type: string, maxLength: 3}
      other: {type: string}
      list: {type: array, items: {type: string, maxLength: 2}}
      ports:
        type: array
        x-kubernetes-list-type: map
        x-kubernetes-list-map-keys: [k]
        items: {type: object, required: [k], properties: {k: {type: string}, v: {type: string, maxLength: 2}}}
      env: {type: object, additionalProperties: {type: string, maxLength: 2}}
      set: {type: array, x-kubernetes-list-type: set, items: {type: string}}
`)
	tests := []struct {
		name, old, new string
		want           []string
	}{
		{"unchanged invalid field is kept", `{spec: {name: toolong, other: a}}`, `{spec: {name: toolong, other: b}}`, nil},
		{"changed invalid field is reported", `{spec: {name: toolong}}`, `{spec: {name: toolonger}}`, []string{"spec.name: Too long: may not be more than 3 bytes"}},
		{"new invalid field is reported", `{spec: {}}`, `{spec: {name: toolong}}`, []string{"spec.name: Too long: may not be more than 3 bytes"}},
		{"unchanged list", `{spec: {list: [abc, d]}}`, `{spec: {list: [abc, d]}}`, nil},
		{"items of a changed atomic list are not matched", `{spec: {list: [abc, d]}}`, `{spec: {list: [abc, e]}}`, []string{"spec.list[0]: Too long: may not be more than 2 bytes"}},
		{"map list items match by key", `{spec: {ports: [{k: a, v: abc}, {k: b, v: x}]}}`, `{spec: {ports: [{k: b, v: z}, {k: a, v: abc}, {k: c, v: abc}]}}`, []string{"spec.ports[2].v: Too long: may not be more than 2 bytes"}},
		{"map values match by key", `{spec: {env: {a: abc, b: abc}}}`, `{spec: {env: {a: abc, b: abcd, c: abc}}}`, []string{"spec.env.b: Too long: may not be more than 2 bytes", "spec.env.c: Too long: may not be more than 2 bytes"}},
		{"set duplicates already there", `{spec: {set: [a, a]}}`, `{spec: {set: [a, a, b]}}`, nil},
		{"new set duplicates", `{spec: {set: [a]}}`, `{spec: {set: [a, a]}}`, []string{`spec.set[1]: Duplicate value: "a"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := errorStrings(ValidateUpdate(object(t, tt.new), object(t, tt.old), s, nil))
			if !reflect.DeepEqual(got, emptyIfNil(tt.want)) {
				t.Errorf("got:\n%q\nwant:\n%q", got, tt.want)
			}
		})
	}
}

func TestValidateListSetsAndMaps(t *testing.T) {
	s := structural(t, `
type: object
properties:
  set: {type: array, x-kubernetes-list-type: set, items: {type: string}}
  multi:
    type: array
    x-kubernetes-list-type: map
    x-kubernetes-list-map-keys: [name, proto]
    items: {type: object, properties: {name: {type: string}, proto: {type: string}}}
  single:
    type: array
    x-kubernetes-list-type: map
    x-kubernetes-list-map-keys: [name]
    items: {type: object, properties: {name: {type: string}}}
  nested: {type: object, additionalProperties: {type: array, x-kubernetes-list-type: set, items: {type: integer}}}
`)
	tests := []struct {
		name, obj string
		want      []string
	}{
		{"no duplicates", `{set: [a, b], multi: [{name: a, proto: x}, {name: a, proto: y}], single: [{name: a}, {name: b}]}`, nil},
		{"set", `{set: [a, b, a, a, b]}`, []string{`set[2]: Duplicate value: "a"`, `set[4]: Duplicate value: "b"`}},
		{"multi-key map", `{multi: [{name: a, proto: x}, {proto: x, name: a}, {name: b}, {name: b}]}`, []string{`multi[1]: Duplicate value: {"name":"a","proto":"x"}`, `multi[3]: Duplicate value: {"name":"b"}`}},
		{"single-key map and missing keys", `{single: [{name: a}, {name: a}, {}, {}]}`, []string{`single[1]: Duplicate value: {"name":"a"}`, `single[3]: Duplicate value: {}`}},
		{"map items must be objects", `{single: [{name: a}, 5]}`, []string{`single[1]: Invalid value: 5: must be an object for an array of list-type map`}},
		{"under additionalProperties", `{nested: {k: [1, 1]}}`, []string{`nested[k][1]: Duplicate value: 1`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := errorStrings(ValidateListSetsAndMaps(nil, s, object(t, tt.obj)))
			if !reflect.DeepEqual(got, emptyIfNil(tt.want)) {
				t.Errorf("got:\n%q\nwant:\n%q", got, tt.want)
			}
		})
	}
}
