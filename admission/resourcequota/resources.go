package resourcequota

import (
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// add returns a + b.
func add(a, b corev1.ResourceList) corev1.ResourceList {
	out := a.DeepCopy()
	if out == nil {
		out = corev1.ResourceList{}
	}
	for k, v := range b {
		q := out[k]
		q.Add(v)
		out[k] = q
	}
	return out
}

// mask keeps the names of list that are in names.
func mask(list corev1.ResourceList, names []corev1.ResourceName) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, n := range names {
		if q, ok := list[n]; ok {
			out[n] = q
		}
	}
	return out
}

func names(list corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(list))
	for n := range list {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// lessOrEqual reports whether a <= b for every name both have, and the
// names where it is not.
func lessOrEqual(a, b corev1.ResourceList) (bool, []corev1.ResourceName) {
	var exceeded []corev1.ResourceName
	for n, q := range a {
		if limit, ok := b[n]; ok && q.Cmp(limit) > 0 {
			exceeded = append(exceeded, n)
		}
	}
	slices.Sort(exceeded)
	return len(exceeded) == 0, exceeded
}

// subtractNonNegative is a - b for the names of a, none below zero.
func subtractNonNegative(a, b corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for n, q := range a {
		q = q.DeepCopy()
		if o, ok := b[n]; ok {
			q.Sub(o)
		}
		if q.Sign() < 0 {
			q = resource.Quantity{Format: q.Format}
		}
		out[n] = q
	}
	return out
}

// negative are the names of list below zero.
func negative(list corev1.ResourceList) []corev1.ResourceName {
	var out []corev1.ResourceName
	for n, q := range list {
		if q.Sign() < 0 {
			out = append(out, n)
		}
	}
	return out
}

func removeZeros(list corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for n, q := range list {
		if !q.IsZero() {
			out[n] = q
		}
	}
	return out
}

// prettyPrint is kube's rendering of a list in quota messages: sorted
// name=quantity pairs.
func prettyPrint(list corev1.ResourceList) string {
	parts := make([]string, 0, len(list))
	for _, n := range names(list) {
		q := list[n]
		parts = append(parts, string(n)+"="+q.String())
	}
	return strings.Join(parts, ",")
}

func prettyPrintNames(ns []corev1.ResourceName) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = string(n)
	}
	sort.Strings(s)
	return strings.Join(s, ",")
}

var one = resource.MustParse("1")
