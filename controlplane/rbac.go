package controlplane

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	apisrbac "github.com/capstan-io/capstan/apis/rbac"
	"github.com/capstan-io/capstan/authz"
	authzrbac "github.com/capstan-io/capstan/authz/rbac"
	"github.com/capstan-io/capstan/authz/rbac/aggregation"
	"github.com/capstan-io/capstan/authz/rbac/bootstrap"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/server"
)

// priorityRBAC orders rbac.authorization.k8s.io in /apis, as kube.
const priorityRBAC = 17000

// rbacGroup is rbac.authorization.k8s.io/v1. Its stores sit behind the
// escalation checks, which ask authorizer about the escalate and bind verbs
// and read what users hold from the stores themselves.
func (f *storeBuilder) rbacGroup(authorizer authz.Authorizer) (builtGroup, apisrbac.Stores, error) {
	specs := []resourceSpec{
		{name: "roles", kind: "Role", strategy: apisrbac.RoleStrategy{},
			new: func() runtime.Object { return &rbacv1.Role{} }, newList: func() runtime.Object { return &rbacv1.RoleList{} }},
		{name: "rolebindings", kind: "RoleBinding", strategy: apisrbac.RoleBindingStrategy{},
			new: func() runtime.Object { return &rbacv1.RoleBinding{} }, newList: func() runtime.Object { return &rbacv1.RoleBindingList{} }},
		{name: "clusterroles", kind: "ClusterRole", strategy: apisrbac.ClusterRoleStrategy{},
			new: func() runtime.Object { return &rbacv1.ClusterRole{} }, newList: func() runtime.Object { return &rbacv1.ClusterRoleList{} }},
		{name: "clusterrolebindings", kind: "ClusterRoleBinding", strategy: apisrbac.ClusterRoleBindingStrategy{},
			new:     func() runtime.Object { return &rbacv1.ClusterRoleBinding{} },
			newList: func() runtime.Object { return &rbacv1.ClusterRoleBindingList{} }},
	}
	bg, err := f.buildGroup(rbacv1.GroupName, priorityRBAC, rbacv1.SchemeGroupVersion, specs)
	if err != nil {
		return bg, apisrbac.Stores{}, err
	}
	stores := apisrbac.Stores{Roles: bg.stores["roles"], RoleBindings: bg.stores["rolebindings"],
		ClusterRoles: bg.stores["clusterroles"], ClusterRoleBindings: bg.stores["clusterrolebindings"]}
	guard := &apisrbac.Guard{Authorizer: authorizer, Resolver: authzrbac.NewResolver(stores.Source())}
	guarded := map[string]rest.Storage{
		"roles":               guard.RoleStorage(stores.Roles),
		"rolebindings":        guard.RoleBindingStorage(stores.RoleBindings),
		"clusterroles":        guard.ClusterRoleStorage(stores.ClusterRoles),
		"clusterrolebindings": guard.ClusterRoleBindingStorage(stores.ClusterRoleBindings),
	}
	for i := range bg.group.Versions[0].Resources {
		r := &bg.group.Versions[0].Resources[i]
		if s, ok := guarded[r.Name]; ok {
			r.Storage = s
		}
	}
	return bg, stores, nil
}

// installAuthorization serves the RBAC and authorization groups, points the
// RBAC authorizer at the registry until its informers have synced, and adds
// the post-start hooks that reconcile the bootstrap policy, start those
// informers and run the cluster role aggregation controller.
func (c Config) installAuthorization(s *server.Server) error {
	authorizer := c.Generic.Authorization
	rbacGroup, stores, err := c.stores.rbacGroup(authorizer)
	if err != nil {
		return err
	}
	for _, g := range []builtGroup{rbacGroup, authorizationGroup(authorizer)} {
		if err := s.InstallAPIGroup(g.group); err != nil {
			return err
		}
	}
	h := &rbacHooks{source: c.Authorization.rbacSource(), logger: c.Logger}
	if h.source != nil {
		h.source.Set(stores.Source())
	}
	s.AddPostStartHook("rbac/bootstrap-roles", h.bootstrap)
	if c.Disabled.Runs(ClusterRoleAggregationController) {
		s.AddPostStartHook("start-cluster-role-aggregation-controller", c.elector.hook(ClusterRoleAggregationController, h.runAggregation))
	}
	if c.Authorization != nil && c.Authorization.node != nil {
		s.AddPostStartHook("start-node-authorizer-informers", nodeGraphHook(c.Authorization.node))
	}
	if c.Authorization != nil && c.Authorization.reload != nil {
		s.AddPostStartHook("authorization-config-reload", func(hc server.HookContext) error {
			go c.Authorization.reload.run(hc)
			return nil
		})
	}
	return nil
}

// rbacHooks are the RBAC post-start hooks.
type rbacHooks struct {
	source *authzrbac.Deferred // nil without RBAC mode
	logger *slog.Logger
}

// bootstrap reconciles kube's default roles and bindings through the API,
// retrying for up to a minute, as kube's rbac/bootstrap-roles hook, then
// starts the RBAC authorizer's informers.
func (h *rbacHooks) bootstrap(hc server.HookContext) error {
	client, err := kubernetes.NewForConfig(hc.LoopbackClientConfig)
	if err != nil {
		return err
	}
	r := bootstrap.Reconciler{Client: client.RbacV1(), Namespaces: client.CoreV1().Namespaces(), Logger: h.logger.With("hook", "rbac/bootstrap-roles")}
	var last error
	err = wait.PollUntilContextTimeout(hc, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		last = r.Ensure(ctx)
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("unable to initialize roles: %w (last error: %v)", err, last)
	}
	if h.source != nil {
		go h.switchToInformers(hc, client)
	}
	return nil
}

// switchToInformers switches the RBAC authorizer from reading the registry
// to informers' caches once they hold the reconciled bootstrap policy. The
// registry answers the same until then, only at a higher cost per request,
// so /readyz does not wait for the switch: the informers' lists would
// otherwise be the last step of the start.
func (h *rbacHooks) switchToInformers(hc server.HookContext, client kubernetes.Interface) {
	factory := informers.NewSharedInformerFactory(client, 0)
	src := authzrbac.NewInformerSource(factory.Rbac().V1())
	factory.Start(hc.Done())
	if !cache.WaitForCacheSync(hc.Done(), src.Synced()...) {
		h.logger.Info("RBAC informers did not sync; authorizing from the registry", "err", hc.Err())
		return
	}
	h.source.Set(src)
}

// runAggregation runs the cluster role aggregation controller, which kube
// runs in kube-controller-manager: admin, edit and view get their rules
// from the roles labeled to aggregate into them. It starts once every
// post-start hook has finished (the bootstrap policy is written), as kube's
// controller manager starts after the API server: it aggregates the
// bootstrap roles once rather than again after each of them is created,
// and its list and server-side applies do not compete with the start for
// the CPU. /readyz never waited for it.
func (h *rbacHooks) runAggregation(hc server.HookContext) error {
	client, err := kubernetes.NewForConfig(hc.LoopbackClientConfig)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	ctrl, err := aggregation.New(factory.Rbac().V1().ClusterRoles(), client.RbacV1(), h.logger)
	if err != nil {
		return err
	}
	hc.AfterHooks(func() { ctrl.Run(hc, 1) })
	return nil
}
