package schema

import (
	"reflect"
	"testing"
)

func TestPrune(t *testing.T) {
	// kube's documentation example, extended
	cronTab := `
type: object
properties:
  spec:
    type: object
    properties:
      cronSpec: {type: string}
      image: {type: string}
      replicas: {type: integer}
  status:
    type: object
    x-kubernetes-preserve-unknown-fields: true
    properties:
      conditions:
        type: array
        items: {type: object, properties: {type: {type: string}}}
  template:
    type: object
    x-kubernetes-embedded-resource: true
    properties:
      spec: {type: object, properties: {a: {type: string}}}
  labels:
    type: object
    additionalProperties: {type: object, properties: {a: {type: string}}}
`
	tests := []struct {
		name       string
		schema     string
		root       bool
		obj        string
		want       string
		wantPruned []string
	}{{
		name:       "documentation example",
		schema:     cronTab,
		root:       true,
		obj:        `{apiVersion: stable.example.com/v1, kind: CronTab, metadata: {name: my-new-cron-object}, spec: {cronSpec: "* * * * */5", image: my-awesome-cron-image, someRandomField: 42}}`,
		want:       `{apiVersion: stable.example.com/v1, kind: CronTab, metadata: {name: my-new-cron-object}, spec: {cronSpec: "* * * * */5", image: my-awesome-cron-image}}`,
		wantPruned: []string{"spec.someRandomField"},
	}, {
		name:       "preserved, embedded, maps and lists",
		schema:     cronTab,
		root:       true,
		obj:        `{extra: 1, status: {x: 1, conditions: [{type: a, b: c}]}, template: {apiVersion: v1, kind: Pod, metadata: {name: x, foo: 1}, spec: {a: b, c: d}, status: {}}, labels: {k: {a: b, z: 1}}}`,
		want:       `{status: {x: 1, conditions: [{type: a}]}, template: {apiVersion: v1, kind: Pod, metadata: {name: x, foo: 1}, spec: {a: b}}, labels: {k: {a: b}}}`,
		wantPruned: []string{"extra", "labels.k.z", "status.conditions[0].b", "template.spec.c", "template.status"},
	}, {
		name:       "not a resource root: metadata is pruned like any field, silently at the top",
		schema:     `{type: object, properties: {a: {type: string}}}`,
		obj:        `{a: x, metadata: {}, b: {c: 1}}`,
		want:       `{a: x}`,
		wantPruned: []string{"b"},
	}, {
		name:       "additionalProperties true keeps keys but prunes their objects",
		schema:     `{type: object, properties: {m: {type: object, additionalProperties: true}}}`,
		obj:        `{m: {a: 1, b: {c: 1}, l: [{d: 1}]}}`,
		want:       `{m: {a: 1, b: {}, l: [{}]}}`,
		wantPruned: []string{"m.b.c", "m.l[0].d"},
	}, {
		name:       "no schema",
		root:       true,
		obj:        `{apiVersion: v1, kind: X, metadata: {}, spec: {}}`,
		want:       `{apiVersion: v1, kind: X, metadata: {}}`,
		wantPruned: []string{"spec"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s *Structural
			if tt.schema != "" {
				s = structural(t, tt.schema)
			}
			obj := object(t, tt.obj)
			pruned := Prune(obj, s, tt.root)
			if !reflect.DeepEqual(obj, object(t, tt.want)) {
				t.Errorf("object = %v\nwant     %v", obj, object(t, tt.want))
			}
			if !reflect.DeepEqual(pruned, tt.wantPruned) {
				t.Errorf("pruned = %q, want %q", pruned, tt.wantPruned)
			}
		})
	}
}
