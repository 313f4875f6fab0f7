package bootstrap

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// ruleBuilder writes a PolicyRule compactly; every list is deduplicated and
// sorted, as kube's bootstrap policy stores its rules.
type ruleBuilder struct{ r rbacv1.PolicyRule }

func verbs(v ...string) *ruleBuilder {
	return &ruleBuilder{r: rbacv1.PolicyRule{Verbs: sets.List(sets.New(v...))}}
}

func (b *ruleBuilder) groups(g ...string) *ruleBuilder {
	b.r.APIGroups = sets.List(sets.New(g...))
	return b
}

func (b *ruleBuilder) resources(r ...string) *ruleBuilder {
	b.r.Resources = sets.List(sets.New(r...))
	return b
}

func (b *ruleBuilder) names(n ...string) *ruleBuilder {
	b.r.ResourceNames = sets.List(sets.New(n...))
	return b
}

func (b *ruleBuilder) urls(u ...string) *ruleBuilder {
	b.r.NonResourceURLs = sets.List(sets.New(u...))
	return b
}

func (b *ruleBuilder) rule() rbacv1.PolicyRule { return b.r }

func rules(bs ...*ruleBuilder) []rbacv1.PolicyRule {
	out := make([]rbacv1.PolicyRule, len(bs))
	for i, b := range bs {
		out[i] = b.rule()
	}
	return out
}

// clusterRole is a bootstrap ClusterRole with the default metadata and the
// given extra labels.
func clusterRole(name string, labels map[string]string, rs []rbacv1.PolicyRule) rbacv1.ClusterRole {
	return rbacv1.ClusterRole{ObjectMeta: defaultMeta(name, labels), Rules: rs}
}

// aggregatedRole is a ClusterRole whose rules are those of the cluster roles
// labeled aggregate-to-<to>: true.
func aggregatedRole(name, to string, labels map[string]string) rbacv1.ClusterRole {
	return rbacv1.ClusterRole{
		ObjectMeta: defaultMeta(name, labels),
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
			{MatchLabels: map[string]string{aggregateLabelPrefix + to: "true"}},
		}},
	}
}

// clusterBinding binds the ClusterRole of the same name to subjects.
func clusterBinding(name string, subjects ...rbacv1.Subject) rbacv1.ClusterRoleBinding {
	return rbacv1.ClusterRoleBinding{
		ObjectMeta: defaultMeta(name, nil),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   subjects,
	}
}

func group(name string) rbacv1.Subject {
	return rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: name}
}

func user(name string) rbacv1.Subject {
	return rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: name}
}

func serviceAccount(namespace, name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}
}

// defaultMeta is the metadata of every bootstrap object: the bootstrapping
// label and the autoupdate annotation that lets reconciliation update it.
func defaultMeta(name string, labels map[string]string) metav1.ObjectMeta {
	l := map[string]string{BootstrappingLabel: "rbac-defaults"}
	for k, v := range labels {
		l[k] = v
	}
	return metav1.ObjectMeta{Name: name, Labels: l, Annotations: map[string]string{rbacv1.AutoUpdateAnnotationKey: "true"}}
}
