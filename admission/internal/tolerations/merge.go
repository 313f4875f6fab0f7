// Package tolerations merges pod tolerations as kube's plugins do
// (RuntimeClass, PodTolerationRestriction): a toleration another one
// covers is dropped.
package tolerations

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// Merge returns first then second without the tolerations that another
// one of them already covers (the first of two equal ones is kept).
func Merge(first, second []corev1.Toleration) []corev1.Toleration {
	all := append(append([]corev1.Toleration(nil), first...), second...)
	var merged []corev1.Toleration
next:
	for i, t := range all {
		for _, m := range merged {
			if covers(m, t) {
				continue next
			}
		}
		for _, later := range all[i+1:] {
			if !equality.Semantic.DeepEqual(t, later) && covers(later, t) {
				continue next
			}
		}
		merged = append(merged, t)
	}
	return merged
}

// covers reports whether ss tolerates every taint t does.
func covers(ss, t corev1.Toleration) bool {
	if equality.Semantic.DeepEqual(t, ss) {
		return true
	}
	if t.Key != ss.Key && (ss.Key != "" || ss.Operator != corev1.TolerationOpExists) {
		return false
	}
	if t.Effect != ss.Effect && ss.Effect != "" {
		return false
	}
	if ss.Effect == corev1.TaintEffectNoExecute && ss.TolerationSeconds != nil &&
		(t.TolerationSeconds == nil || *t.TolerationSeconds > *ss.TolerationSeconds) {
		return false
	}
	switch ss.Operator {
	case corev1.TolerationOpEqual, "":
		return t.Operator == corev1.TolerationOpEqual && t.Value == ss.Value
	case corev1.TolerationOpExists:
		return true
	}
	return false
}

// Whitelisted reports whether each of tolerations is covered by one of
// whitelist; an empty whitelist allows any.
func Whitelisted(tolerations, whitelist []corev1.Toleration) bool {
next:
	for _, t := range tolerations {
		for _, w := range whitelist {
			if covers(w, t) {
				continue next
			}
		}
		return len(whitelist) == 0
	}
	return true
}
