package aggregation_test

import (
	"context"
	"log/slog"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"

	"github.com/capstan-io/capstan/authz/rbac/aggregation"
	"github.com/capstan-io/capstan/internal/testkit"
)

// TestStaleViewDoesNotOverwrite: an aggregated role that an admin has
// since rewritten by hand (no aggregationRule, own rules) is not
// overwritten by a sync from an informer that still holds the old role.
func TestStaleViewDoesNotOverwrite(t *testing.T) {
	s := testkit.StartServer(t)
	client := s.Client(t)
	ctx := context.Background()
	roles := client.RbacV1().ClusterRoles()

	source := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "stale-source", Labels: map[string]string{"stale-test": "true"}},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}}}
	if _, err := roles.Create(ctx, source, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A selector no other role matches, so the server's own controller
	// leaves the role's rules empty and its resourceVersion settles.
	agg := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "stale-agg"},
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"stale-none": "true"}}}}}
	old, err := roles.Create(ctx, agg, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// What the stale informer holds: the role selecting the source.
	stale := old.DeepCopy()
	stale.AggregationRule.ClusterRoleSelectors[0].MatchLabels = map[string]string{"stale-test": "true"}

	custom := rbacv1.PolicyRule{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}
	edited := old.DeepCopy()
	edited.AggregationRule = nil
	edited.Rules = []rbacv1.PolicyRule{custom}
	if _, err := roles.Update(ctx, edited, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	factory := informers.NewSharedInformerFactory(client, 0)
	informer := factory.Rbac().V1().ClusterRoles()
	for _, r := range []*rbacv1.ClusterRole{stale, source} {
		if err := informer.Informer().GetIndexer().Add(r); err != nil {
			t.Fatal(err)
		}
	}
	c, err := aggregation.New(informer, client.RbacV1(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := aggregation.Sync(ctx, c, "stale-agg"); !apierrors.IsConflict(err) {
		t.Errorf("sync from a stale view: got %v, want a conflict", err)
	}
	got, err := roles.Get(ctx, "stale-agg", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.AggregationRule != nil || len(got.Rules) != 1 || got.Rules[0].Resources[0] != "configmaps" {
		t.Errorf("the admin's edit was overwritten: %+v", got)
	}
}
