// Package bootstrap is the RBAC policy every cluster starts with (kube's
// default ClusterRoles and ClusterRoleBindings: cluster-admin, admin, edit,
// view, system:basic-user, system:discovery, ...) and the reconciliation
// that brings stored objects up to it without undoing what users added.
package bootstrap

import rbacv1 "k8s.io/api/rbac/v1"

// Labels and annotations of the bootstrap policy.
const (
	// BootstrappingLabel marks the objects of the bootstrap policy.
	BootstrappingLabel = "kubernetes.io/bootstrapping"
	// aggregateLabelPrefix + "admin"|"edit"|"view" adds a ClusterRole's rules
	// to that aggregated role.
	aggregateLabelPrefix = "rbac.authorization.k8s.io/aggregate-to-"
)

// The groups of API resources, as the rules name them.
const (
	legacyGroup         = ""
	appsGroup           = "apps"
	authenticationGroup = "authentication.k8s.io"
	authorizationGroup  = "authorization.k8s.io"
	autoscalingGroup    = "autoscaling"
	batchGroup          = "batch"
	certificatesGroup   = "certificates.k8s.io"
	coordinationGroup   = "coordination.k8s.io"
	discoveryGroup      = "discovery.k8s.io"
	eventsGroup         = "events.k8s.io"
	extensionsGroup     = "extensions"
	networkingGroup     = "networking.k8s.io"
	policyGroup         = "policy"
	rbacGroup           = "rbac.authorization.k8s.io"
	resourceGroup       = "resource.k8s.io"
	storageGroup        = "storage.k8s.io"
)

var (
	read      = []string{"get", "list", "watch"}
	write     = []string{"create", "update", "patch", "delete", "deletecollection"}
	readWrite = append(append([]string(nil), read...), write...)
)

// ClusterRoles are the bootstrap cluster roles, as kube 1.37 defines them
// with its default feature gates.
func ClusterRoles() []rbacv1.ClusterRole {
	roles := []rbacv1.ClusterRole{
		clusterRole("cluster-admin", nil, rules(
			verbs("*").groups("*").resources("*"),
			verbs("*").urls("*"),
		)),
		clusterRole("system:discovery", nil, rules(verbs("get").urls(
			"/healthz", "/livez", "/readyz", "/version", "/version/",
			"/openapi", "/openapi/*", "/api", "/api/*", "/apis", "/apis/*"))),
		clusterRole("system:monitoring", nil, rules(
			verbs("get").urls("/metrics", "/metrics/slis", "/livez", "/readyz", "/healthz",
				"/livez/*", "/readyz/*", "/healthz/*", "/statusz", "/flagz"),
			verbs("get").groups(legacyGroup).resources("nodes/metrics"),
		)),
		clusterRole("system:basic-user", nil, rules(
			verbs("create").groups(authorizationGroup).resources("selfsubjectaccessreviews", "selfsubjectrulesreviews"),
			verbs("create").groups(authenticationGroup).resources("selfsubjectreviews"),
		)),
		clusterRole("system:public-info-viewer", nil, rules(verbs("get").urls(
			"/healthz", "/livez", "/readyz", "/version", "/version/"))),
		aggregatedRole("admin", "admin", nil),
		aggregatedRole("edit", "edit", map[string]string{aggregateLabelPrefix + "admin": "true"}),
		aggregatedRole("view", "view", map[string]string{aggregateLabelPrefix + "edit": "true"}),
		clusterRole("system:aggregate-to-admin", map[string]string{aggregateLabelPrefix + "admin": "true"}, rules(
			verbs("create").groups(authorizationGroup).resources("localsubjectaccessreviews"),
			verbs(readWrite...).groups(rbacGroup).resources("roles", "rolebindings"),
		)),
		clusterRole("system:aggregate-to-edit", map[string]string{aggregateLabelPrefix + "edit": "true"}, editRules()),
		clusterRole("system:aggregate-to-view", map[string]string{aggregateLabelPrefix + "view": "true"}, viewRules()),
	}
	roles = append(roles, componentRoles()...)
	return append(roles, kubeComponentRoles()...)
}

// ClusterRoleBindings are the bootstrap bindings of the roles above.
func ClusterRoleBindings() []rbacv1.ClusterRoleBinding {
	return []rbacv1.ClusterRoleBinding{
		clusterBinding("cluster-admin", group("system:masters")),
		clusterBinding("system:monitoring", group("system:monitoring")),
		clusterBinding("system:discovery", group("system:authenticated")),
		clusterBinding("system:basic-user", group("system:authenticated")),
		clusterBinding("system:public-info-viewer", group("system:authenticated"), group("system:unauthenticated")),
		clusterBinding("system:node-proxier", user("system:kube-proxy")),
		clusterBinding("system:kube-dns", serviceAccount("kube-system", "kube-dns")),
		clusterBinding("system:volume-scheduler", user("system:kube-scheduler")),
		clusterBinding("system:service-account-issuer-discovery", group("system:serviceaccounts")),
		clusterBinding("system:cluster-trust-bundle-discovery", group("system:serviceaccounts")),
		clusterBinding("system:kube-controller-manager", user("system:kube-controller-manager")),
		clusterBinding("system:kube-scheduler", user("system:kube-scheduler")),
		// Nodes are authorized by the Node authorizer; the binding is kept,
		// empty, as kube keeps it.
		clusterBinding("system:node"),
	}
}
