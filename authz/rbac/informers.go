package rbac

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	rbacinformers "k8s.io/client-go/informers/rbac/v1"
	"k8s.io/client-go/tools/cache"
)

// InformerSource reads RBAC objects from client-go informers' caches: no
// request to storage per authorization, at the price of a short lag.
type InformerSource struct {
	informers rbacinformers.Interface
}

// NewInformerSource returns the Source of the informers of i. Asking for the
// informers registers them with their factory, which must be started
// afterwards (see Synced).
func NewInformerSource(i rbacinformers.Interface) *InformerSource {
	s := &InformerSource{informers: i}
	s.informers.Roles().Informer()
	s.informers.RoleBindings().Informer()
	s.informers.ClusterRoles().Informer()
	s.informers.ClusterRoleBindings().Informer()
	return s
}

// Synced are the informers' HasSynced functions, for cache.WaitForCacheSync.
func (s *InformerSource) Synced() []cache.InformerSynced {
	return []cache.InformerSynced{
		s.informers.Roles().Informer().HasSynced,
		s.informers.RoleBindings().Informer().HasSynced,
		s.informers.ClusterRoles().Informer().HasSynced,
		s.informers.ClusterRoleBindings().Informer().HasSynced,
	}
}

// GetRole reads a Role from the cache.
func (s *InformerSource) GetRole(_ context.Context, namespace, name string) (*rbacv1.Role, error) {
	return s.informers.Roles().Lister().Roles(namespace).Get(name)
}

// ListRoleBindings lists a namespace's RoleBindings from the cache.
func (s *InformerSource) ListRoleBindings(_ context.Context, namespace string) ([]*rbacv1.RoleBinding, error) {
	return s.informers.RoleBindings().Lister().RoleBindings(namespace).List(labels.Everything())
}

// GetClusterRole reads a ClusterRole from the cache.
func (s *InformerSource) GetClusterRole(_ context.Context, name string) (*rbacv1.ClusterRole, error) {
	return s.informers.ClusterRoles().Lister().Get(name)
}

// ListClusterRoleBindings lists the ClusterRoleBindings from the cache.
func (s *InformerSource) ListClusterRoleBindings(context.Context) ([]*rbacv1.ClusterRoleBinding, error) {
	return s.informers.ClusterRoleBindings().Lister().List(labels.Everything())
}
