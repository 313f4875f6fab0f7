package resource

import (
	"testing"

	dracel "k8s.io/dynamic-resource-allocation/cel"
)

// BenchmarkCELEnvironment is what building DRA's CEL environment costs: what
// every start paid at package init while the compiler was asked for there.
// The library keeps one environment per feature set, so each round asks for
// the other set to make it build again.
func BenchmarkCELEnvironment(b *testing.B) {
	sets := []dracel.Features{celFeatures, {EnableConsumableCapacity: !celFeatures.EnableConsumableCapacity}}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		dracel.GetCompiler(sets[i%2])
	}
}
