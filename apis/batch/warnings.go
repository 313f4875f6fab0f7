package batch

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// podNameWarnings warns when the name of a workload whose pods take their
// names from it is not a DNS label.
func podNameWarnings(name string) []string {
	msgs := validation.IsDNS1123Label(name)
	if len(msgs) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: %v", msgs)}
}

// jobSpecWarnings warns about an indexed job too large for the controller
// to track its failed indexes.
func jobSpecWarnings(fldPath *field.Path, spec *batchv1.JobSpec) []string {
	const completionsSoftLimit, parallelismSoftLimit = 100_000, 10_000
	if ptr.Deref(spec.CompletionMode, "") != batchv1.IndexedCompletion {
		return nil
	}
	if ptr.Deref(spec.Completions, 0) > completionsSoftLimit && ptr.Deref(spec.Parallelism, 0) > parallelismSoftLimit {
		return []string{fmt.Sprintf("%s: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail", fldPath)}
	}
	return nil
}
