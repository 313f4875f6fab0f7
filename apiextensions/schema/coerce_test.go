package schema

import (
	"reflect"
	"testing"
)

func TestCoerceResource(t *testing.T) {
	s := structural(t, `
type: object
properties:
  spec:
    type: object
    properties:
      a: {type: string}
      n: {type: string}
      tpl: {type: object, x-kubernetes-embedded-resource: true, x-kubernetes-preserve-unknown-fields: true}
`)
	tests := []struct {
		name    string
		obj     string
		opts    CoerceOptions
		want    string
		unknown []string
		wantErr string
	}{{
		name:    "request body",
		obj:     `{apiVersion: example.com/v1, kind: Foo, metadata: {name: a, bogus: 1}, spec: {a: x, b: y, n: null, tpl: {kind: Pod, metadata: {name: t, bogus: 2}}}, status: {}}`,
		opts:    CoerceOptions{ReturnUnknownFieldPaths: true},
		want:    `{apiVersion: example.com/v1, kind: Foo, metadata: {name: a}, spec: {a: x, tpl: {kind: Pod, metadata: {name: t}}}}`,
		unknown: []string{"metadata.bogus", "spec.b", "status", "spec.tpl.metadata.bogus"},
	}, {
		name:    "malformed metadata",
		obj:     `{metadata: {name: 5}}`,
		wantErr: "json: cannot unmarshal number into Go struct field ObjectMeta.name of type string",
	}, {
		name: "from storage: malformed metadata dropped",
		obj:  `{kind: Foo, metadata: {name: a, labels: 5}}`,
		opts: CoerceOptions{DropInvalidFields: true},
		want: `{kind: Foo, metadata: {name: a}}`,
	}, {
		name:    "kind must be a string",
		obj:     `{kind: 5}`,
		wantErr: ".kind accessor error: 5 is of the type int64, expected string",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := object(t, tt.obj)
			unknown, err := CoerceResource(obj, s, tt.opts)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(unknown, tt.unknown) {
				t.Errorf("unknown = %q, want %q", unknown, tt.unknown)
			}
			if want := object(t, tt.want); !reflect.DeepEqual(obj, want) {
				t.Errorf("object = %v\nwant     %v", obj, want)
			}
		})
	}
}
