package openapi

import (
	"testing"

	"github.com/capstan-io/capstan/apis/scheme"
	"github.com/capstan-io/capstan/openapi/generated"
)

// The groups capstan serves today.
func benchService(b *testing.B) *Service {
	s, _ := newTestService(b, coreGroup(), coordinationGroup(), eventsGroup())
	return s
}

// BenchmarkCatalog is the one-time cost of the definitions of both forms.
func BenchmarkCatalog(b *testing.B) {
	for b.Loop() {
		c := NewCatalog(scheme.Scheme, generated.GetOpenAPIDefinitions)
		c.Definitions(V2)
		c.Definitions(V3)
	}
}

// BenchmarkV2 builds and encodes /openapi/v2 (JSON).
func BenchmarkV2(b *testing.B) {
	catalog.Definitions(V2)
	var size int
	for b.Loop() {
		doc, err := benchService(b).v2()
		if err != nil {
			b.Fatal(err)
		}
		size = len(doc.json)
	}
	b.ReportMetric(float64(size), "bytes/doc")
}

// BenchmarkV2Protobuf converts /openapi/v2 to protobuf.
func BenchmarkV2Protobuf(b *testing.B) {
	doc, err := benchService(b).v2()
	if err != nil {
		b.Fatal(err)
	}
	var size int
	for b.Loop() {
		pb, err := protoV2(doc.json)
		if err != nil {
			b.Fatal(err)
		}
		size = len(pb)
	}
	b.ReportMetric(float64(size), "bytes/doc")
}

// BenchmarkV3CoreV1 builds and encodes /openapi/v3/api/v1.
func BenchmarkV3CoreV1(b *testing.B) { benchV3(b, "api/v1") }

// BenchmarkV3CoordinationV1 builds /openapi/v3/apis/coordination.k8s.io/v1.
func BenchmarkV3CoordinationV1(b *testing.B) { benchV3(b, "apis/coordination.k8s.io/v1") }

func benchV3(b *testing.B, key string) {
	catalog.Definitions(V3)
	var size int
	for b.Loop() {
		doc, _, err := benchService(b).v3(key)
		if err != nil {
			b.Fatal(err)
		}
		size = len(doc.json)
	}
	b.ReportMetric(float64(size), "bytes/doc")
}

// BenchmarkV3Root builds /openapi/v3, which builds every v3 document.
func BenchmarkV3Root(b *testing.B) {
	catalog.Definitions(V3)
	for b.Loop() {
		if _, err := benchService(b).v3Root(); err != nil {
			b.Fatal(err)
		}
	}
}
