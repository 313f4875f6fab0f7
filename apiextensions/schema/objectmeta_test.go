package schema

import (
	"fmt"
	"reflect"
	"testing"
)

func TestCoerceEmbeddedMeta(t *testing.T) {
	s := structural(t, `
type: object
properties:
  tpl:
    type: object
    x-kubernetes-embedded-resource: true
    x-kubernetes-preserve-unknown-fields: true
  list:
    type: array
    items: {type: object, x-kubernetes-embedded-resource: true, x-kubernetes-preserve-unknown-fields: true}
`)
	tests := []struct {
		name      string
		obj       string
		opts      CoerceOptions
		want      string
		wantErr   string
		wantPaths []string
	}{{
		name:      "unknown metadata fields go, and are reported",
		obj:       `{metadata: {bogus: 1}, tpl: {apiVersion: v1, kind: Pod, metadata: {name: a, bogus: 1, creationTimestamp: null}, spec: {x: 1}}}`,
		opts:      CoerceOptions{ReturnUnknownFieldPaths: true},
		want:      `{metadata: {bogus: 1}, tpl: {apiVersion: v1, kind: Pod, metadata: {name: a}, spec: {x: 1}}}`,
		wantPaths: []string{"tpl.metadata.bogus"},
	}, {
		name:    "malformed metadata fails",
		obj:     `{list: [{kind: Pod, metadata: {name: 1}}]}`,
		want:    `{list: [{kind: Pod, metadata: {name: 1}}]}`,
		wantErr: `list[0].metadata: Invalid value: {"name":1}: json: cannot unmarshal number into Go struct field ObjectMeta.name of type string`,
	}, {
		name: "malformed fields are dropped on request",
		obj:  `{list: [{kind: 5, metadata: {name: 1, namespace: ns}}]}`,
		opts: CoerceOptions{DropInvalidFields: true},
		want: `{list: [{metadata: {namespace: ns}}]}`,
	}, {
		name:    "kind must be a string",
		obj:     `{tpl: {kind: 5}}`,
		want:    `{tpl: {kind: 5}}`,
		wantErr: `tpl.kind: Invalid value: 5: must be a string`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := object(t, tt.obj)
			ferr, paths := CoerceEmbeddedMeta(nil, obj, s, false, tt.opts)
			if got := fmt.Sprint(ferr); (ferr != nil || tt.wantErr != "") && got != tt.wantErr {
				t.Errorf("error = %s, want %s", got, tt.wantErr)
			}
			if !reflect.DeepEqual(paths, tt.wantPaths) {
				t.Errorf("paths = %q, want %q", paths, tt.wantPaths)
			}
			if want := object(t, tt.want); !reflect.DeepEqual(obj, want) {
				t.Errorf("object = %v\nwant     %v", obj, want)
			}
		})
	}
}

func TestValidateEmbeddedResources(t *testing.T) {
	tests := []struct {
		name string
		obj  string
		root bool
		want []string
	}{
		{"valid root", `{apiVersion: example.com/v1, kind: Foo, metadata: {name: foo}}`, true, nil},
		{"missing type meta", `{metadata: {}}`, true, []string{"apiVersion: Required value", "kind: Required value"}},
		{"not a root", `{metadata: {name: "a/b"}}`, false, nil},
		{"bad values", `{apiVersion: "", kind: 5, metadata: {generateName: "a/", namespace: "NS"}}`, true, []string{
			`apiVersion: Invalid value: "": must not be empty`,
			`kind: Invalid value: 5: must be a string`,
			`metadata.generateName: Invalid value: "a/": may not contain '/'`,
			`metadata.namespace: Invalid value: "NS": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := errorStrings(ValidateEmbeddedResources(nil, object(t, tt.obj), nil, tt.root))
			if !reflect.DeepEqual(got, emptyIfNil(tt.want)) {
				t.Errorf("got:\n%q\nwant:\n%q", got, tt.want)
			}
		})
	}
}

func TestGetObjectMetaDropsMalformedFields(t *testing.T) {
	obj := object(t, `{metadata: {name: a, labels: 5, bogus: 1}}`)
	meta, found, unknown, err := GetObjectMeta(obj, ObjectMetaOptions{DropMalformedFields: true, ReturnUnknownFieldPaths: true})
	if err != nil || !found {
		t.Fatalf("found %v, err %v", found, err)
	}
	if meta.Name != "a" || meta.Labels != nil {
		t.Errorf("meta = %+v", meta)
	}
	if want := []string{"metadata.bogus"}; !reflect.DeepEqual(unknown, want) {
		t.Errorf("unknown = %q, want %q", unknown, want)
	}
}
