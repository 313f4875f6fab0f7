package batch

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/request"
)

// TestJobDeletePolicy: a job deleted through batch/v1 orphans its pods by
// default and warns so when no policy was given; from inside the server it
// deletes them, silently.
func TestJobDeletePolicy(t *testing.T) {
	batchV1 := request.WithInfo(context.Background(), &request.Info{IsResourceRequest: true, APIGroup: "batch", APIVersion: "v1"})
	background := metav1.DeletePropagationBackground
	orphan := true
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		opts   metav1.DeleteOptions
		policy registry.GarbageCollectionPolicy
		warns  bool
	}{
		{"batch/v1 without a policy", batchV1, metav1.DeleteOptions{}, registry.OrphanDependents, true},
		{"batch/v1 with a policy", batchV1, metav1.DeleteOptions{PropagationPolicy: &background}, registry.OrphanDependents, false},
		{"batch/v1 with orphanDependents", batchV1, metav1.DeleteOptions{OrphanDependents: &orphan}, registry.OrphanDependents, false},
		{"inside the server", context.Background(), metav1.DeleteOptions{}, registry.DeleteDependents, false},
	} {
		if got := (JobStrategy{}).DefaultGarbageCollectionPolicy(tc.ctx); got != tc.policy {
			t.Errorf("%s: policy %s, want %s", tc.name, got, tc.policy)
		}
		got := (JobStrategy{}).WarningsOnDelete(tc.ctx, &tc.opts)
		if warns := slices.Contains(got, jobsOrphanPods); warns != tc.warns || len(got) > 1 {
			t.Errorf("%s: warnings %q, want the orphan warning: %v", tc.name, got, tc.warns)
		}
	}
}
