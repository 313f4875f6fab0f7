package bootstrap

import (
	"maps"
	"reflect"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/authz/rbac"
)

// Operation is what reconciling an object takes.
type Operation string

// The operations of a reconciliation.
const (
	OpNone     Operation = "none"
	OpCreate   Operation = "create"
	OpUpdate   Operation = "update"
	OpRecreate Operation = "recreate" // a binding whose roleRef changed
)

// RoleResult is the outcome of reconciling a ClusterRole.
type RoleResult struct {
	// Role is the role to write: existing plus what expected adds.
	Role         *rbacv1.ClusterRole
	MissingRules []rbacv1.PolicyRule
	Op           Operation
	// Protected is true when the stored role has opted out of updates
	// (autoupdate annotation "false"): Op says what was needed, not done.
	Protected bool
}

// ReconcileClusterRole returns what existing (nil if there is none) needs to
// hold at least what expected does, as kube's reconciliation: labels and
// annotations merged (the stored values win), missing rules appended,
// missing aggregation selectors appended, an aggregationRule expected not to
// be there removed. Nothing a user added is taken away.
func ReconcileClusterRole(existing, expected *rbacv1.ClusterRole) RoleResult {
	if existing == nil {
		return RoleResult{Role: expected.DeepCopy(), MissingRules: expected.Rules, Op: OpCreate}
	}
	res := RoleResult{Role: existing.DeepCopy(), Op: OpNone, Protected: isProtected(existing.Annotations)}
	role := res.Role
	if mergeMeta(&role.ObjectMeta, &expected.ObjectMeta) {
		res.Op = OpUpdate
	}
	_, res.MissingRules = rbac.Covers(existing.Rules, expected.Rules)
	if len(res.MissingRules) > 0 {
		role.Rules = append(role.Rules, res.MissingRules...)
		res.Op = OpUpdate
	}
	switch missing := missingSelectors(existing.AggregationRule, expected.AggregationRule); {
	case expected.AggregationRule == nil && existing.AggregationRule != nil:
		role.AggregationRule = nil
		res.Op = OpUpdate
	case len(missing) > 0:
		if role.AggregationRule == nil {
			role.AggregationRule = &rbacv1.AggregationRule{}
		}
		role.AggregationRule.ClusterRoleSelectors = append(role.AggregationRule.ClusterRoleSelectors, missing...)
		res.Op = OpUpdate
	}
	return res
}

// missingSelectors are the selectors of expected that have no semantic
// equal among existing's.
func missingSelectors(existing, expected *rbacv1.AggregationRule) []metav1.LabelSelector {
	if expected == nil {
		return nil
	}
	var missing []metav1.LabelSelector
	for _, want := range expected.ClusterRoleSelectors {
		found := false
		for _, have := range selectorsOf(existing) {
			if equality.Semantic.DeepEqual(have, want) {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, want)
		}
	}
	return missing
}

func selectorsOf(r *rbacv1.AggregationRule) []metav1.LabelSelector {
	if r == nil {
		return nil
	}
	return r.ClusterRoleSelectors
}

// BindingResult is the outcome of reconciling a ClusterRoleBinding.
type BindingResult struct {
	Binding         *rbacv1.ClusterRoleBinding
	MissingSubjects []rbacv1.Subject
	Op              Operation
	Protected       bool
}

// ReconcileClusterRoleBinding returns what existing (nil if there is none)
// needs to bind at least expected's subjects: labels and annotations
// merged, missing subjects appended. A binding whose roleRef differs, which
// cannot be updated, is recreated as expected.
func ReconcileClusterRoleBinding(existing, expected *rbacv1.ClusterRoleBinding) BindingResult {
	if existing == nil {
		return BindingResult{Binding: expected.DeepCopy(), MissingSubjects: expected.Subjects, Op: OpCreate}
	}
	protected := isProtected(existing.Annotations)
	if existing.RoleRef != expected.RoleRef {
		return BindingResult{Binding: expected.DeepCopy(), Op: OpRecreate, Protected: protected}
	}
	res := BindingResult{Binding: existing.DeepCopy(), Op: OpNone, Protected: protected}
	if mergeMeta(&res.Binding.ObjectMeta, &expected.ObjectMeta) {
		res.Op = OpUpdate
	}
	for _, s := range expected.Subjects {
		if !containsSubject(existing.Subjects, s) && !containsSubject(res.MissingSubjects, s) {
			res.MissingSubjects = append(res.MissingSubjects, s)
		}
	}
	if len(res.MissingSubjects) > 0 {
		res.Binding.Subjects = append(res.Binding.Subjects, res.MissingSubjects...)
		res.Op = OpUpdate
	}
	return res
}

func containsSubject(list []rbacv1.Subject, s rbacv1.Subject) bool {
	for _, have := range list {
		if have == s {
			return true
		}
	}
	return false
}

// isProtected: an object annotated autoupdate "false" is left alone.
func isProtected(annotations map[string]string) bool {
	return annotations[rbacv1.AutoUpdateAnnotationKey] == "false"
}

// mergeMeta adds expected's labels and annotations to m, keeping m's value
// where both have a key, and reports whether m changed.
func mergeMeta(m, expected *metav1.ObjectMeta) bool {
	labels, annotations := merge(expected.Labels, m.Labels), merge(expected.Annotations, m.Annotations)
	changed := !reflect.DeepEqual(labels, m.Labels) || !reflect.DeepEqual(annotations, m.Annotations)
	m.Labels, m.Annotations = labels, annotations
	return changed
}

// merge returns the union of maps, later ones winning; nil if all are nil.
func merge(ms ...map[string]string) map[string]string {
	var out map[string]string
	for _, m := range ms {
		if m != nil && out == nil {
			out = map[string]string{}
		}
		maps.Copy(out, m)
	}
	return out
}
