package registry

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/warning"
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
// own default policy (events, replication controllers, jobs); the others
// get DeleteDependents, kube's default.
type GarbageCollectionDefaulter interface {
	DefaultGarbageCollectionPolicy(ctx context.Context) GarbageCollectionPolicy
}

// DeleteWarner is implemented by strategies that warn about a delete's
// options (a job deleted without a policy keeps its pods).
type DeleteWarner interface {
	WarningsOnDelete(ctx context.Context, opts *metav1.DeleteOptions) []string
}

// defaultGarbageCollectionPolicy is the strategy's default policy.
func (s *Store) defaultGarbageCollectionPolicy(ctx context.Context) GarbageCollectionPolicy {
	if d, ok := s.strategy.(GarbageCollectionDefaulter); ok {
		return d.DefaultGarbageCollectionPolicy(ctx)
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
	if s.deletion.NoGarbageCollector {
		return old, false
	}
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

// warnOnDelete adds the strategy's warnings about a delete with opts.
func (s *Store) warnOnDelete(ctx context.Context, opts *metav1.DeleteOptions) {
	d, ok := s.strategy.(DeleteWarner)
	if !ok || opts == nil {
		return
	}
	for _, w := range d.WarningsOnDelete(ctx, opts) {
		warning.Add(ctx, w)
	}
}
