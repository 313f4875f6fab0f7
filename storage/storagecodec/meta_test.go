package storagecodec

import (
	stdjson "encoding/json"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/serializer/json"
)

var typeMetaCases = []struct {
	name, data string
	scanned    bool // scanTypeMeta answers, rather than leaving it to DefaultMetaFactory
}{
	{"typical", `{"kind":"CustomResourceDefinition","apiVersion":"apiextensions.k8s.io/v1","metadata":{"name":"a"}}`, true},
	{"after nested values", ` { "spec": {"a": [1, {"kind": "x"}, "}]\"", null, true]}, "n": -1.5e3, "apiVersion" : "v1" , "kind":"Pod" } `, true},
	{"core group", `{"apiVersion":"v1","kind":"ConfigMap"}`, true},
	{"empty object", `{}`, true},
	{"no type meta", `{"metadata":{}}`, true},
	{"duplicates: the last counts", `{"kind":"A","kind":"B","apiVersion":"g/v1","apiVersion":"h/v2"}`, true},
	{"escaped brackets in strings", `{"s":"{[\\\"","kind":"K","apiVersion":"v1"}`, true},
	{"bad group version", `{"apiVersion":"a/b/c","kind":"K"}`, true},

	{"key in another case", `{"Kind":"K","apiVersion":"v1"}`, false},
	{"key folding to kind", "{\"\u212aind\":\"K\",\"apiVersion\":\"v1\"}", false},
	{"escaped key", `{"\u006bind":"K","apiVersion":"v1"}`, false},
	{"escaped value", `{"kind":"\u004b","apiVersion":"v1"}`, false},
	{"null value", `{"kind":null,"apiVersion":"v1"}`, false},
	{"number value", `{"kind":1,"apiVersion":"v1"}`, false},
	{"invalid UTF-8", "{\"kind\":\"\xff\",\"apiVersion\":\"v1\"}", false},
	{"not an object", `["kind"]`, false},
	{"trailing data", `{"kind":"K"} x`, false},
	{"truncated", `{"kind":"K","spec":{"a":`, false},
	{"missing value", `{"spec":,"kind":"K"}`, false},
	{"empty", ``, false},
}

// The scan gives DefaultMetaFactory's answers, and leaves to it what it
// cannot read for sure.
func TestTypeMetaFactory(t *testing.T) {
	for _, tc := range typeMetaCases {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, ok := scanTypeMeta([]byte(tc.data)); ok != tc.scanned {
				t.Errorf("scanned = %v, want %v", ok, tc.scanned)
			}
			sameAsDefault(t, []byte(tc.data))
		})
	}
}

func sameAsDefault(t *testing.T, data []byte) {
	t.Helper()
	got, gotErr := typeMetaFactory{}.Interpret(data)
	want, wantErr := json.DefaultMetaFactory.Interpret(data)
	if wantErr != nil && !stdjson.Valid(data) {
		// Malformed: the decoder after Interpret refuses it either way.
		return
	}
	if fmt.Sprint(got, gotErr) != fmt.Sprint(want, wantErr) {
		t.Errorf("Interpret(%q) = %v, %v; DefaultMetaFactory: %v, %v", data, got, gotErr, want, wantErr)
	}
}

func FuzzTypeMetaFactory(f *testing.F) {
	for _, tc := range typeMetaCases {
		f.Add([]byte(tc.data))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsDefault(t, data)
	})
}

func BenchmarkTypeMetaFactory(b *testing.B) {
	data := []byte(`{"kind":"CustomResourceDefinition","apiVersion":"apiextensions.k8s.io/v1","metadata":{"name":"widgets.example.com","uid":"0c6b0f3e"},` +
		`"spec":{"group":"example.com","versions":[{"name":"v1","schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","description":"a widget's desired state"}}}}}]},"status":{"conditions":[{"type":"Established","status":"True"}]}}`)
	for name, m := range map[string]json.MetaFactory{"scan": typeMetaFactory{}, "default": json.DefaultMetaFactory} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Interpret(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
