package controllers

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// findCondition returns the CRD's condition of type t, or nil.
func findCondition(crd *apiextv1.CustomResourceDefinition, t apiextv1.CustomResourceDefinitionConditionType) *apiextv1.CustomResourceDefinitionCondition {
	for i := range crd.Status.Conditions {
		if crd.Status.Conditions[i].Type == t {
			return &crd.Status.Conditions[i]
		}
	}
	return nil
}

// conditionTrue reports whether the condition of type t is present and True.
func conditionTrue(crd *apiextv1.CustomResourceDefinition, t apiextv1.CustomResourceDefinitionConditionType) bool {
	c := findCondition(crd, t)
	return c != nil && c.Status == apiextv1.ConditionTrue
}

// sameCondition reports whether a and b agree on all but their times.
func sameCondition(a, b *apiextv1.CustomResourceDefinitionCondition) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Type == b.Type && a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message
}

// setCondition adds c to the CRD's conditions or overwrites the condition of
// its type. The transition time is now for a new condition, a status change
// or a condition that never had one; otherwise it is kept.
func setCondition(crd *apiextv1.CustomResourceDefinition, c apiextv1.CustomResourceDefinitionCondition, now metav1.Time) {
	old := findCondition(crd, c.Type)
	if old == nil {
		c.LastTransitionTime = now
		crd.Status.Conditions = append(crd.Status.Conditions, c)
		return
	}
	if old.Status != c.Status || old.LastTransitionTime.IsZero() {
		old.LastTransitionTime = now
	}
	old.Status, old.Reason, old.Message = c.Status, c.Reason, c.Message
}

// statusCopy returns a copy of crd to change the status and metadata of:
// the spec, which a status write does not change, is the original's,
// shared rather than copied (schemas are most of a CRD).
func statusCopy(crd *apiextv1.CustomResourceDefinition) *apiextv1.CustomResourceDefinition {
	out := &apiextv1.CustomResourceDefinition{TypeMeta: crd.TypeMeta, Spec: crd.Spec}
	crd.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	crd.Status.DeepCopyInto(&out.Status)
	return out
}

// removeCondition drops the condition of type t.
func removeCondition(crd *apiextv1.CustomResourceDefinition, t apiextv1.CustomResourceDefinitionConditionType) {
	crd.Status.Conditions = slices.DeleteFunc(slices.Clone(crd.Status.Conditions),
		func(c apiextv1.CustomResourceDefinitionCondition) bool { return c.Type == t })
}

// hasFinalizer reports whether the CRD carries finalizer f.
func hasFinalizer(crd *apiextv1.CustomResourceDefinition, f string) bool {
	return slices.Contains(crd.Finalizers, f)
}

// removeFinalizer drops every occurrence of f, leaving an empty, non-nil
// list so that the update carries it.
func removeFinalizer(crd *apiextv1.CustomResourceDefinition, f string) {
	out := make([]string, 0, len(crd.Finalizers))
	for _, x := range crd.Finalizers {
		if x != f {
			out = append(out, x)
		}
	}
	crd.Finalizers = out
}
