package namespace

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// report gathers what one deletion pass found; conditions turns it into the
// namespace conditions kube's controller sets.
type report struct {
	discoveryErr error
	parseErr     error
	contentErrs  []error
	// remaining counts the objects left per resource.
	remaining map[schema.GroupVersionResource]int
	// finalizers counts the remaining objects held by each finalizer.
	finalizers map[string]int
}

func newReport() *report {
	return &report{remaining: map[schema.GroupVersionResource]int{}, finalizers: map[string]int{}}
}

// conditionTypes are the conditions the controller owns, in the order it
// adds them.
var conditionTypes = []corev1.NamespaceConditionType{
	corev1.NamespaceDeletionDiscoveryFailure,
	corev1.NamespaceDeletionGVParsingFailure,
	corev1.NamespaceDeletionContentFailure,
	corev1.NamespaceContentRemaining,
	corev1.NamespaceFinalizersRemaining,
}

// okConditions are the reason and message of each condition when all is well.
var okConditions = map[corev1.NamespaceConditionType][2]string{
	corev1.NamespaceDeletionDiscoveryFailure: {"ResourcesDiscovered", "All resources successfully discovered"},
	corev1.NamespaceDeletionGVParsingFailure: {"ParsedGroupVersions", "All legacy kube types successfully parsed"},
	corev1.NamespaceDeletionContentFailure:   {"ContentDeleted", "All content successfully deleted, may be waiting on finalization"},
	corev1.NamespaceContentRemaining:         {"ContentRemoved", "All content successfully removed"},
	corev1.NamespaceFinalizersRemaining:      {"ContentHasNoFinalizers", "All content-preserving finalizers finished"},
}

// conditions returns one condition per type: True with the failure, or False
// with the ok reason. LastTransitionTime is left to updateConditions.
func (r *report) conditions() []corev1.NamespaceCondition {
	failures := map[corev1.NamespaceConditionType][2]string{}
	if r.discoveryErr != nil {
		msg := r.discoveryErr.Error()
		var groupErr *discovery.ErrGroupDiscoveryFailed
		if errors.As(r.discoveryErr, &groupErr) {
			msg = fmt.Sprintf("Discovery failed for some groups, %d failing: %v", len(groupErr.Groups), r.discoveryErr)
		}
		failures[corev1.NamespaceDeletionDiscoveryFailure] = [2]string{"DiscoveryFailed", msg}
	}
	if r.parseErr != nil {
		failures[corev1.NamespaceDeletionGVParsingFailure] = [2]string{"GroupVersionParsingFailed", r.parseErr.Error()}
	}
	if len(r.contentErrs) > 0 {
		msgs := make([]string, 0, len(r.contentErrs))
		for _, err := range r.contentErrs {
			msgs = append(msgs, err.Error())
		}
		sort.Strings(msgs)
		failures[corev1.NamespaceDeletionContentFailure] = [2]string{"ContentDeletionFailed",
			fmt.Sprintf("Failed to delete all resource types, %d remaining: %v", len(msgs), strings.Join(msgs, ", "))}
	}
	if items := r.remainingItems(); len(items) > 0 {
		failures[corev1.NamespaceContentRemaining] = [2]string{"SomeResourcesRemain",
			fmt.Sprintf("Some resources are remaining: %s", strings.Join(items, ", "))}
	}
	if items := r.finalizerItems(); len(items) > 0 {
		failures[corev1.NamespaceFinalizersRemaining] = [2]string{"SomeFinalizersRemain",
			fmt.Sprintf("Some content in the namespace has finalizers remaining: %s", strings.Join(items, ", "))}
	}

	out := make([]corev1.NamespaceCondition, 0, len(conditionTypes))
	for _, t := range conditionTypes {
		c := corev1.NamespaceCondition{Type: t, Status: corev1.ConditionFalse, Reason: okConditions[t][0], Message: okConditions[t][1]}
		if f, failed := failures[t]; failed {
			c.Status, c.Reason, c.Message = corev1.ConditionTrue, f[0], f[1]
		}
		out = append(out, c)
	}
	return out
}

// remainingItems describes the remaining objects per resource, sorted so
// that an unchanged state does not rewrite the status.
func (r *report) remainingItems() []string {
	var items []string
	for gvr, n := range r.remaining {
		if n > 0 {
			items = append(items, fmt.Sprintf("%s.%s has %d resource instances", gvr.Resource, gvr.Group, n))
		}
	}
	sort.Strings(items)
	return items
}

func (r *report) finalizerItems() []string {
	var items []string
	for f, n := range r.finalizers {
		if n > 0 {
			items = append(items, fmt.Sprintf("%s in %d resource instances", f, n))
		}
	}
	sort.Strings(items)
	return items
}

// updateConditions merges conds into status and reports whether anything
// changed. LastTransitionTime moves only when a condition's status does.
func updateConditions(status *corev1.NamespaceStatus, conds []corev1.NamespaceCondition, now metav1.Time) bool {
	changed := false
	for _, c := range conds {
		i := indexOfCondition(status.Conditions, c.Type)
		if i < 0 {
			c.LastTransitionTime = now
			status.Conditions = append(status.Conditions, c)
			changed = true
			continue
		}
		old := &status.Conditions[i]
		if old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message {
			continue
		}
		if old.Status != c.Status {
			old.LastTransitionTime = now
		}
		old.Status, old.Reason, old.Message = c.Status, c.Reason, c.Message
		changed = true
	}
	return changed
}

func indexOfCondition(conds []corev1.NamespaceCondition, t corev1.NamespaceConditionType) int {
	for i := range conds {
		if conds[i].Type == t {
			return i
		}
	}
	return -1
}
