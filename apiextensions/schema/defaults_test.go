package schema

import (
	"reflect"
	"testing"
)

func TestDefault(t *testing.T) {
	// kube's documentation example, extended
	s := structural(t, `
type: object
properties:
  spec:
    type: object
    default: {}
    properties:
      cronSpec: {type: string, default: "5 0 * * *"}
      image: {type: string}
      replicas: {type: integer, minimum: 1, maximum: 10, default: 1}
      nullable: {type: string, nullable: true, default: x}
      ports:
        type: array
        items:
          type: object
          default: {}
          properties:
            protocol: {type: string, default: TCP}
      env:
        type: object
        additionalProperties: {type: object, default: {}, properties: {value: {type: string, default: v}}}
`)
	tests := []struct {
		name string
		obj  string
		want string
	}{
		{"documentation example", `{spec: {image: my-awesome-cron-image}}`,
			`{spec: {cronSpec: "5 0 * * *", image: my-awesome-cron-image, replicas: 1, nullable: x}}`},
		{"nested from an object default", `{}`,
			`{spec: {cronSpec: "5 0 * * *", replicas: 1, nullable: x}}`},
		{"set values win", `{spec: {cronSpec: a, replicas: 3}}`,
			`{spec: {cronSpec: a, replicas: 3, nullable: x}}`},
		{"null: replaced unless nullable", `{spec: {replicas: null, nullable: null}}`,
			`{spec: {cronSpec: "5 0 * * *", replicas: 1, nullable: null}}`},
		{"items and additionalProperties", `{spec: {ports: [{}, null, {protocol: UDP}], env: {A: null, B: {}, C: {value: c}}}}`,
			`{spec: {cronSpec: "5 0 * * *", replicas: 1, nullable: x, ports: [{protocol: TCP}, {protocol: TCP}, {protocol: UDP}], env: {A: {value: v}, B: {value: v}, C: {value: c}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := object(t, tt.obj)
			Default(obj, s)
			if want := object(t, tt.want); !reflect.DeepEqual(obj, want) {
				t.Errorf("got  %v\nwant %v", obj, want)
			}
		})
	}

	// defaults are copies
	a, b := map[string]any{}, map[string]any{}
	Default(a, s)
	Default(b, s)
	a["spec"].(map[string]any)["image"] = "changed"
	if _, ok := b["spec"].(map[string]any)["image"]; ok {
		t.Errorf("default shared between objects")
	}
}

func TestPruneNonNullableNullsWithoutDefaults(t *testing.T) {
	s := structural(t, `
type: object
properties:
  a: {type: string}
  b: {type: string, nullable: true}
  c: {type: string, default: c}
  l: {type: array, items: {type: string}}
  m: {type: object, additionalProperties: {type: string}}
  o: {type: object, properties: {x: {type: string}}}
`)
	obj := object(t, `{a: null, b: null, c: null, l: [null], m: {k: null}, o: {x: null}, unknown: null}`)
	PruneNonNullableNullsWithoutDefaults(obj, s)
	if want := object(t, `{b: null, c: null, l: [null], m: {}, o: {}, unknown: null}`); !reflect.DeepEqual(obj, want) {
		t.Errorf("got  %v\nwant %v", obj, want)
	}
}

func TestPruneDefaults(t *testing.T) {
	tests := []struct {
		name, schema, want string
	}{{
		name:   "unknown fields go",
		schema: `{type: object, properties: {spec: {type: object, default: {a: 1, b: 2}, properties: {a: {type: integer}}}}}`,
		want:   `{type: object, properties: {spec: {type: object, default: {a: 1}, properties: {a: {type: integer}}}}}`,
	}, {
		name:   "embedded metadata is cut to ObjectMeta",
		schema: `{type: object, properties: {t: {type: object, x-kubernetes-embedded-resource: true, x-kubernetes-preserve-unknown-fields: true, default: {kind: Pod, metadata: {name: a, bogus: 1}, x: 1}}}}`,
		want:   `{type: object, properties: {t: {type: object, x-kubernetes-embedded-resource: true, x-kubernetes-preserve-unknown-fields: true, default: {kind: Pod, metadata: {name: a}, x: 1}}}}`,
	}, {
		name:   "items and additionalProperties",
		schema: `{type: object, properties: {l: {type: array, items: {type: object, default: {a: 1, z: 0}, properties: {a: {type: integer}}}}, m: {type: object, additionalProperties: {type: object, default: {z: 1}}}}}`,
		want:   `{type: object, properties: {l: {type: array, items: {type: object, default: {a: 1}, properties: {a: {type: integer}}}}, m: {type: object, additionalProperties: {type: object, default: {}}}}}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := structural(t, tt.schema)
			if err := PruneDefaults(s); err != nil {
				t.Fatal(err)
			}
			if want := structural(t, tt.want); !reflect.DeepEqual(s, want) {
				t.Errorf("got  %v\nwant %v", s.toSpec(rawSpec), want.toSpec(rawSpec))
			}
		})
	}
}
