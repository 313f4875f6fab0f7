package policy

import (
	"context"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/request"
)

// Budgets gives the pods/eviction subresource the PodDisruptionBudgets of a
// poddisruptionbudgets store. Status updates go through the status strategy
// at the budget's resourceVersion, as kube's eviction writes them through
// poddisruptionbudgets/status.
type Budgets struct {
	store  *registry.Store
	status *registry.Store
}

var _ core.DisruptionBudgets = (*Budgets)(nil)

// NewBudgets returns the budgets of store.
func NewBudgets(store *registry.Store) *Budgets {
	return &Budgets{store: store, status: store.WithStrategy(PDBStatusStrategy{})}
}

// List returns the budgets of a namespace.
func (b *Budgets) List(ctx context.Context, namespace string) ([]policyv1.PodDisruptionBudget, error) {
	out, err := b.store.List(request.WithNamespace(ctx, namespace), &rest.ListOptions{})
	if err != nil {
		return nil, err
	}
	return out.(*policyv1.PodDisruptionBudgetList).Items, nil
}

// Get returns one budget.
func (b *Budgets) Get(ctx context.Context, namespace, name string) (*policyv1.PodDisruptionBudget, error) {
	out, err := b.store.Get(request.WithNamespace(ctx, namespace), name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return out.(*policyv1.PodDisruptionBudget), nil
}

// UpdateStatus writes the status of pdb at pdb's resourceVersion.
func (b *Budgets) UpdateStatus(ctx context.Context, pdb *policyv1.PodDisruptionBudget) error {
	to := func(context.Context, runtime.Object) (runtime.Object, error) { return pdb.DeepCopy(), nil }
	_, _, err := b.status.Update(request.WithNamespace(ctx, pdb.Namespace), pdb.Name, rest.UpdatedObjectFunc(to),
		nil, nil, false, &metav1.UpdateOptions{})
	return err
}
