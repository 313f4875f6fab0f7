package registry

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/endpoints/request"
	"github.com/capstan-io/capstan/endpoints/warning"
)

// GarbageCollectionPolicy is what a delete without propagationPolicy or
// orphanDependents does with the object's dependents.
type GarbageCollectionPolicy string

const (
	// DeleteDependents leaves the dependents to the garbage collector, which
	// deletes them in the background. It is the default of most resources.
	DeleteDependents GarbageCollectionPolicy = "DeleteDependents"
	// OrphanDependents adds the orphan finalizer: the garbage collector
	// removes the object's ownerReferences from its dependents first.
	OrphanDependents GarbageCollectionPolicy = "OrphanDependents"
	// GarbageCollectionUnsupported: deletes never add the garbage
	// collector's finalizers, whatever the options say (events).
	GarbageCollectionUnsupported GarbageCollectionPolicy = "Unsupported"
)

// GarbageCollectionDefaulter is implemented by strategies that choose their
// own default policy; the others get defaultGarbageCollectionPolicy's.
type GarbageCollectionDefaulter interface {
	DefaultGarbageCollectionPolicy(ctx context.Context) GarbageCollectionPolicy
}

var (
	coreEvents             = schema.GroupResource{Resource: "events"}
	eventsEvents           = schema.GroupResource{Group: "events.k8s.io", Resource: "events"}
	replicationControllers = schema.GroupResource{Resource: "replicationcontrollers"}
	batchJobs              = schema.GroupResource{Group: "batch", Resource: "jobs"}
)

// defaultGarbageCollectionPolicy is kube's default for the resource at the
// request's group version: events take no part in garbage collection, and
// replicationcontrollers in v1 and jobs in batch/v1 orphan their pods unless
// told otherwise, for compatibility with the clients that predate the
// collector. A request without a group version (a call from inside the
// server) gets DeleteDependents, as in kube.
func (s *Store) defaultGarbageCollectionPolicy(ctx context.Context) GarbageCollectionPolicy {
	if d, ok := s.strategy.(GarbageCollectionDefaulter); ok {
		return d.DefaultGarbageCollectionPolicy(ctx)
	}
	var gv schema.GroupVersion
	if info, ok := request.InfoFrom(ctx); ok {
		gv = schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}
	}
	switch s.resource {
	case coreEvents, eventsEvents:
		return GarbageCollectionUnsupported
	case replicationControllers:
		if gv == (schema.GroupVersion{Version: "v1"}) {
			return OrphanDependents
		}
	case batchJobs:
		if gv == (schema.GroupVersion{Group: "batch", Version: "v1"}) {
			return OrphanDependents
		}
	}
	return DeleteDependents
}

// orphansDependents reports whether a delete with opts leaves the orphan
// finalizer on m: the options decide, then a finalizer already there, then
// the resource's default.
func orphansDependents(policy GarbageCollectionPolicy, m metav1.Object, opts *metav1.DeleteOptions) bool {
	//nolint:staticcheck // OrphanDependents is deprecated but still honoured.
	if opts.OrphanDependents != nil {
		return *opts.OrphanDependents
	}
	if p := opts.PropagationPolicy; p != nil {
		switch *p {
		case metav1.DeletePropagationOrphan:
			return true
		case metav1.DeletePropagationBackground, metav1.DeletePropagationForeground:
			return false
		}
	}
	if fs := m.GetFinalizers(); slices.Contains(fs, metav1.FinalizerOrphanDependents) {
		return true
	} else if slices.Contains(fs, metav1.FinalizerDeleteDependents) {
		return false
	}
	return policy == OrphanDependents
}

// deletesInForeground reports whether a delete with opts leaves the
// foregroundDeletion finalizer on m: the options decide, then a finalizer
// already there; no resource defaults to foreground.
func deletesInForeground(m metav1.Object, opts *metav1.DeleteOptions) bool {
	//nolint:staticcheck // OrphanDependents is deprecated but still honoured.
	if opts.OrphanDependents != nil {
		return false
	}
	if p := opts.PropagationPolicy; p != nil {
		switch *p {
		case metav1.DeletePropagationForeground:
			return true
		case metav1.DeletePropagationBackground, metav1.DeletePropagationOrphan:
			return false
		}
	}
	if fs := m.GetFinalizers(); slices.Contains(fs, metav1.FinalizerDeleteDependents) {
		return true
	} else if slices.Contains(fs, metav1.FinalizerOrphanDependents) {
		return false
	}
	return false
}

// garbageCollectionFinalizers returns m's finalizers as a delete with opts
// leaves them (orphan and foregroundDeletion added or removed, the others
// kept in order) and whether they changed.
func (s *Store) garbageCollectionFinalizers(ctx context.Context, m metav1.Object, opts *metav1.DeleteOptions) ([]string, bool) {
	old := m.GetFinalizers()
	var orphan, foreground bool
	if policy := s.defaultGarbageCollectionPolicy(ctx); policy != GarbageCollectionUnsupported {
		orphan, foreground = orphansDependents(policy, m, opts), deletesInForeground(m, opts)
	}
	out := make([]string, 0, len(old)+1)
	for _, f := range old {
		if f != metav1.FinalizerOrphanDependents && f != metav1.FinalizerDeleteDependents {
			out = append(out, f)
		}
	}
	if orphan {
		out = append(out, metav1.FinalizerOrphanDependents)
	}
	if foreground {
		out = append(out, metav1.FinalizerDeleteDependents)
	}
	if sameSet(old, out) {
		return old, false
	}
	return out, true
}

func sameSet(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			return false
		}
	}
	return true
}

// jobsOrphanPods is kube's warning on a batch/v1 job deleted without a
// policy: its pods stay, which surprises those who expect them gone.
const jobsOrphanPods = "child pods are preserved by default when jobs are deleted; " +
	"set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning"

// warnOnDelete warns that a delete without propagationPolicy or
// orphanDependents orphans a job's pods.
func (s *Store) warnOnDelete(ctx context.Context, opts *metav1.DeleteOptions) {
	//nolint:staticcheck // OrphanDependents is deprecated but still honoured.
	if opts == nil || s.resource != batchJobs || opts.PropagationPolicy != nil || opts.OrphanDependents != nil {
		return
	}
	if s.defaultGarbageCollectionPolicy(ctx) == OrphanDependents {
		warning.Add(ctx, jobsOrphanPods)
	}
}
