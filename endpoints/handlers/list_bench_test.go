package handlers

import (
	"net/http"
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// BenchmarkList100 lists 100 config maps of 256 bytes of data through the
// handler from the watch cache, consistently (no resourceVersion), in
// each wire format: capstan-load's reads workload without the network,
// the filters and the client.
func BenchmarkList100(b *testing.B) {
	scope, s := configMapScope(b)
	createConfigMaps(b, s, "bench", 100, 256)
	for _, mediaType := range listMediaTypes {
		b.Run(mediaType, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				w := newDiscard()
				scope.List(w, listRequest("bench", mediaType), false)
				if w.code != http.StatusOK {
					b.Fatalf("list = %d", w.code)
				}
			}
		})
	}
}

// TestEmptySelectorsSelectEverything: a list without selectors selects as
// the parsed empty selectors do.
func TestEmptySelectorsSelectEverything(t *testing.T) {
	s := &Scope{}
	ls, err := labelSelector("")
	if err != nil {
		t.Fatal(err)
	}
	fs, err := s.fieldSelector("")
	if err != nil {
		t.Fatal(err)
	}
	if !ls.Empty() || ls.String() != "" || !ls.Matches(labels.Set{"a": "b"}) {
		t.Errorf("label selector of %q = %q, want the empty selector", "", ls)
	}
	if !fs.Empty() || fs.String() != "" || !fs.Matches(fields.Set{"metadata.name": "x"}) || len(fs.Requirements()) != 0 {
		t.Errorf("field selector of %q = %q, want the empty selector", "", fs)
	}
	if _, err := labelSelector("a in ("); err == nil {
		t.Error("an invalid label selector parsed")
	}
}
