package aggregation

import (
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func TestAggregate(t *testing.T) {
	r1 := rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	r2 := rbacv1.PolicyRule{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	r3 := rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/x"}}
	labeled := func(name string, l map[string]string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
		return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}, Rules: rules}
	}
	aggregated := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "agg", Labels: map[string]string{"a": "true"}},
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
			{MatchLabels: map[string]string{"a": "true"}}, {MatchLabels: map[string]string{"b": "true"}},
		}},
		Rules: []rbacv1.PolicyRule{r3}, // stale: replaced
	}
	all := []*rbacv1.ClusterRole{
		aggregated,
		labeled("z-second", map[string]string{"a": "true"}, r2, r1),
		labeled("a-first", map[string]string{"a": "true"}, r1),
		labeled("b-only", map[string]string{"b": "true"}, r3, r1),
		labeled("unrelated", nil, rbacv1.PolicyRule{Verbs: []string{"*"}}),
	}
	list := func(sel labels.Selector) ([]*rbacv1.ClusterRole, error) {
		var out []*rbacv1.ClusterRole
		for _, r := range all {
			if sel.Matches(labels.Set(r.Labels)) {
				out = append(out, r)
			}
		}
		return out, nil
	}
	got, err := Aggregate(aggregated, list)
	if err != nil {
		t.Fatal(err)
	}
	// By selector, then by role name; each rule once; the role itself
	// (which matches its own selector) is skipped.
	if want := []rbacv1.PolicyRule{r1, r2, r3}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	aggregated.AggregationRule.ClusterRoleSelectors = []metav1.LabelSelector{{MatchLabels: map[string]string{"none": "true"}}}
	if got, _ := Aggregate(aggregated, list); got == nil || len(got) != 0 {
		t.Errorf("nothing to aggregate: got %#v, want an empty list", got)
	}
}
