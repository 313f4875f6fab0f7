package bootstrap

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// controllerPrefix names the roles of kube-controller-manager's controllers.
const controllerPrefix = "system:controller:"

// leaseLocking lets a component hold its leader election lease and take
// part in coordinated leader election.
func leaseLocking() []rbacv1.PolicyRule {
	return rules(
		verbs("get", "watch", "list", "create", "update").groups(coordinationGroup).resources("leases"),
		verbs("get", "watch", "list", "create", "update").groups(coordinationGroup).resources("leasecandidates"),
	)
}

func eventsRule() *ruleBuilder {
	return verbs("create", "update", "patch").groups(legacyGroup, eventsGroup).resources("events")
}

// NamespacedRoles are kube's bootstrap Roles, all in kube-system and
// kube-public, in the order kube reconciles them within a namespace.
func NamespacedRoles() []rbacv1.Role {
	sys, pub := metav1.NamespaceSystem, metav1.NamespacePublic
	return []rbacv1.Role{
		// Extension API servers read the authentication trust config map.
		namespacedRole(sys, "extension-apiserver-authentication-reader", rules(
			verbs(read...).groups(legacyGroup).resources("configmaps").names("extension-apiserver-authentication"),
		)),
		namespacedRole(sys, controllerPrefix+"bootstrap-signer", rules(
			verbs(read...).groups(legacyGroup).resources("secrets"),
		)),
		namespacedRole(sys, controllerPrefix+"cloud-provider", rules(
			verbs("create", "get", "list", "watch").groups(legacyGroup).resources("configmaps"),
		)),
		namespacedRole(sys, controllerPrefix+"token-cleaner", rules(
			verbs("get", "list", "watch", "delete").groups(legacyGroup).resources("secrets"),
			eventsRule(),
		)),
		namespacedRole(sys, "system::leader-locking-kube-controller-manager", leaseLocking()),
		namespacedRole(sys, "system::leader-locking-kube-scheduler", leaseLocking()),
		// The bootstrap signer signs the cluster-info config map.
		namespacedRole(pub, controllerPrefix+"bootstrap-signer", rules(
			verbs(read...).groups(legacyGroup).resources("configmaps"),
			verbs("update").groups(legacyGroup).resources("configmaps").names("cluster-info"),
			eventsRule(),
		)),
	}
}

// NamespacedRoleBindings bind the roles above, each in its role's namespace.
func NamespacedRoleBindings() []rbacv1.RoleBinding {
	sys, pub := metav1.NamespaceSystem, metav1.NamespacePublic
	return []rbacv1.RoleBinding{
		roleBinding(sys, "system::extension-apiserver-authentication-reader", "extension-apiserver-authentication-reader",
			user("system:kube-controller-manager"), user("system:kube-scheduler")),
		roleBinding(sys, "system::leader-locking-kube-controller-manager", "system::leader-locking-kube-controller-manager",
			user("system:kube-controller-manager"),
			serviceAccount(sys, "kube-controller-manager"), serviceAccount(sys, "leader-election-controller")),
		roleBinding(sys, "system::leader-locking-kube-scheduler", "system::leader-locking-kube-scheduler",
			user("system:kube-scheduler"), serviceAccount(sys, "kube-scheduler")),
		roleBinding(sys, controllerPrefix+"bootstrap-signer", controllerPrefix+"bootstrap-signer",
			serviceAccount(sys, "bootstrap-signer")),
		roleBinding(sys, controllerPrefix+"cloud-provider", controllerPrefix+"cloud-provider",
			serviceAccount(sys, "cloud-provider")),
		roleBinding(sys, controllerPrefix+"token-cleaner", controllerPrefix+"token-cleaner",
			serviceAccount(sys, "token-cleaner")),
		roleBinding(pub, controllerPrefix+"bootstrap-signer", controllerPrefix+"bootstrap-signer",
			serviceAccount(sys, "bootstrap-signer")),
	}
}

func namespacedRole(namespace, name string, rs []rbacv1.PolicyRule) rbacv1.Role {
	meta := defaultMeta(name, nil)
	meta.Namespace = namespace
	return rbacv1.Role{ObjectMeta: meta, Rules: rs}
}

func roleBinding(namespace, name, roleName string, subjects ...rbacv1.Subject) rbacv1.RoleBinding {
	meta := defaultMeta(name, nil)
	meta.Namespace = namespace
	return rbacv1.RoleBinding{
		ObjectMeta: meta,
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: roleName},
		Subjects:   subjects,
	}
}
