package registry

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/registry/rest"
)

// SubresourceStore serves a subresource that is a view of its parent's
// object, such as status: get and update through the parent's storage with
// the subresource's strategy.
type SubresourceStore struct {
	store *Store
}

var (
	_ rest.Getter  = (*SubresourceStore)(nil)
	_ rest.Updater = (*SubresourceStore)(nil)
)

// Subresource returns the store of a subresource whose updates follow strategy.
func (s *Store) Subresource(strategy Strategy) *SubresourceStore {
	return &SubresourceStore{store: s.WithStrategy(strategy)}
}

// New returns an empty object of the parent resource.
func (s *SubresourceStore) New() runtime.Object { return s.store.New() }

// NamespaceScoped reports the parent's scope.
func (s *SubresourceStore) NamespaceScoped() bool { return s.store.NamespaceScoped() }

// Get reads the parent object.
func (s *SubresourceStore) Get(ctx context.Context, name string, opts *metav1.GetOptions) (runtime.Object, error) {
	return s.store.Get(ctx, name, opts)
}

// Update updates the parent object through the subresource's strategy.
// Subresource strategies do not allow create on update.
func (s *SubresourceStore) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, _ bool, opts *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return s.store.Update(ctx, name, objInfo, createValidation, updateValidation, false, opts)
}

// UpdateOnlyStore is a subresource that only takes updates, such as
// namespaces/finalize.
type UpdateOnlyStore struct {
	sub *SubresourceStore
}

var _ rest.Updater = (*UpdateOnlyStore)(nil)

// UpdateOnly returns a store of a subresource that serves only update.
func (s *Store) UpdateOnly(strategy Strategy) *UpdateOnlyStore {
	return &UpdateOnlyStore{sub: s.Subresource(strategy)}
}

// New returns an empty object of the parent resource.
func (u *UpdateOnlyStore) New() runtime.Object { return u.sub.New() }

// NamespaceScoped reports the parent's scope.
func (u *UpdateOnlyStore) NamespaceScoped() bool { return u.sub.NamespaceScoped() }

// Update updates the parent object through the subresource's strategy.
func (u *UpdateOnlyStore) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, force bool, opts *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return u.sub.Update(ctx, name, objInfo, createValidation, updateValidation, force, opts)
}
