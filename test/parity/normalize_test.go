package parity

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestNormalizeText(t *testing.T) {
	n := normalizer{ns: "parity-abc123"}
	tests := []struct{ in, want string }{
		{`configmaps "a" not found`, `configmaps "a" not found`},
		{`namespace parity-abc123 is gone`, `namespace {ns} is gone`},
		{`uid 0d3a3a2e-1111-4000-8000-000000000000 differs`, `uid <uid> differs`},
		{`at 2026-12-02T07:14:09Z and 2026-12-02T07:14:09.123456+00:00`, `at <time> and <time>`},
		{`Too large resource version: 99999, current: 812`, `Too large resource version: <rv>, current: <rv>`},
		{`ResourceVersion in precondition: 5, ResourceVersion in object meta: 41`, `ResourceVersion in precondition: <rv>, ResourceVersion in object meta: <rv>`},
		{`{\"resourceVersion\":\"535\"}`, `{\"resourceVersion\":\"<rv>\"}`},
		{`must be no more than 63 characters`, `must be no more than 63 characters`},
		{`volume kube-api-access-t869j mounted`, `volume kube-api-access-<generated> mounted`},
		{`kube-api-access-t869jx`, `kube-api-access-t869jx`},
	}
	for _, tt := range tests {
		if got := n.text(tt.in); got != tt.want {
			t.Errorf("text(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNormalizeBody(t *testing.T) {
	n := normalizer{ns: "parity-abc123"}
	tests := []struct {
		name, contentType, body string
		want                    any
	}{
		{"object", "application/json", `{"metadata":{"name":"a","namespace":"parity-abc123","uid":"x","resourceVersion":"12","creationTimestamp":"2026-01-01T00:00:00Z","managedFields":[{"manager":"m","time":"2026-01-01T00:00:00Z"}]}}`,
			map[string]any{"metadata": map[string]any{"name": "a", "namespace": "{ns}", "uid": "<uid>", "resourceVersion": "<resourceVersion>",
				"creationTimestamp": "<creationTimestamp>", "managedFields": []any{map[string]any{"manager": "m", "time": "<time>"}}}}},
		{"empty values stay", "application/json", `{"metadata":{"resourceVersion":"","continue":""}}`,
			map[string]any{"metadata": map[string]any{"resourceVersion": "", "continue": ""}}},
		{"generated name", "application/json", `{"metadata":{"generateName":"g-","name":"g-x7k2p"}}`,
			map[string]any{"metadata": map[string]any{"generateName": "g-", "name": "g-<generated>"}}},
		{"watch stream", "application/json", "{\"type\":\"ADDED\",\"object\":{\"kind\":\"ConfigMap\"}}\n{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ConfigMap\"}}\n",
			map[string]any{"stream": []any{map[string]any{"type": "ADDED", "object": map[string]any{"kind": "ConfigMap"}},
				map[string]any{"type": "BOOKMARK", "object": map[string]any{"kind": "ConfigMap"}}}}},
		{"yaml", "application/yaml", "kind: Status\ncode: 404\n", map[string]any{"kind": "Status", "code": json.Number("404")}},
		{"table age", "application/json;as=Table;v=v1;g=meta.k8s.io", `{"rows":[{"cells":["a","5s","3d4h"]}]}`,
			map[string]any{"rows": []any{map[string]any{"cells": []any{"a", "<age>", "<age>"}}}}},
		{"text", "text/plain; charset=utf-8", "Internal Server Error: \"/api/v1/namespaces/parity-abc123\"", `Internal Server Error: "/api/v1/namespaces/{ns}"`},
		{"protobuf without envelope", "application/vnd.kubernetes.protobuf", "xyz", map[string]any{"protobuf": "no envelope"}},
		{"nothing", "application/json", "", nil},
	}
	for _, tt := range tests {
		got := canonical(n.body(tt.contentType, []byte(tt.body)))
		if want := canonical(tt.want); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: body = %#v, want %#v", tt.name, got, want)
		}
	}
}

// TestCompare: a difference in status, a header or any body field is
// found and named by its path; equal answers have none.
func TestCompare(t *testing.T) {
	base := func() Answer {
		return Answer{ID: "s", Status: 404, Headers: map[string]string{"Content-Type": "application/json", "Audit-Id": "present"},
			Body: map[string]any{"kind": "Status", "details": map[string]any{"causes": []any{map[string]any{"field": "a"}}}}}
	}
	if d := Compare("q", base(), base()); len(d) != 0 {
		t.Fatalf("equal answers differ: %v", d)
	}
	got := base()
	got.Status = 422
	delete(got.Headers, "Audit-Id")
	got.Body.(map[string]any)["details"].(map[string]any)["causes"].([]any)[0].(map[string]any)["field"] = "b"
	var parts []string
	for _, d := range Compare("q", base(), got) {
		parts = append(parts, d.Part)
	}
	want := []string{"status", "header:Audit-Id", "body.details.causes[0].field"}
	if !reflect.DeepEqual(parts, want) {
		t.Errorf("differences %v, want %v", parts, want)
	}
}

func TestExplain(t *testing.T) {
	list := []Explanation{{Step: "gen-*/create-empty", Parts: []string{"body.details"}, Reason: "r"}}
	tests := []struct {
		d    Difference
		want bool
	}{
		{Difference{Step: "gen-core-v1:pods/create-empty", Part: "body.details.causes[0]"}, true},
		{Difference{Step: "gen-core-v1:pods/create-empty", Part: "body.details"}, true},
		{Difference{Step: "gen-core-v1:pods/create-empty", Part: "body.detailsX"}, false},
		{Difference{Step: "gen-core-v1:pods/create-empty", Part: "status"}, false},
		{Difference{Step: "configmaps:create-empty", Part: "body.details"}, false},
	}
	for _, tt := range tests {
		if _, ok := Explain(list, tt.d); ok != tt.want {
			t.Errorf("Explain(%+v) = %v, want %v", tt.d, ok, tt.want)
		}
	}
}
