package bootstrap

import rbacv1 "k8s.io/api/rbac/v1"

const (
	nodeGroup       = "node.k8s.io"
	leaderLockGroup = "coordination.k8s.io"
)

// kubeComponentRoles are the roles of kube-controller-manager,
// kube-scheduler and the kubelets, which capstan does not run but which
// may be pointed at it.
func kubeComponentRoles() []rbacv1.ClusterRole {
	return []rbacv1.ClusterRole{
		clusterRole("system:kube-controller-manager", nil, rules(
			verbs("create", "update", "patch").groups(legacyGroup, eventsGroup).resources("events"),
			verbs("create").groups(leaderLockGroup).resources("leases"),
			verbs("get", "update").groups(leaderLockGroup).resources("leases").names("kube-controller-manager"),
			verbs("create").groups(legacyGroup).resources("secrets", "serviceaccounts"),
			verbs("delete").groups(legacyGroup).resources("secrets"),
			verbs("get").groups(legacyGroup).resources("configmaps", "namespaces", "secrets", "serviceaccounts"),
			verbs("update").groups(legacyGroup).resources("secrets", "serviceaccounts"),
			verbs("create").groups(authenticationGroup).resources("tokenreviews"),
			verbs("create").groups(authorizationGroup).resources("subjectaccessreviews"),
			verbs("list", "watch").groups("*").resources("*"),
			verbs("create").groups(legacyGroup).resources("serviceaccounts/token"),
		)),
		clusterRole("system:kube-scheduler", nil, schedulerRules()),
		clusterRole("system:node", nil, nodeRules()),
	}
}

func schedulerRules() []rbacv1.PolicyRule {
	return rules(
		verbs("create", "update", "patch").groups(legacyGroup, eventsGroup).resources("events"),
		verbs("create").groups(leaderLockGroup).resources("leases"),
		verbs("get", "list", "update", "watch").groups(leaderLockGroup).resources("leases").names("kube-scheduler"),
		verbs(readWrite...).groups(leaderLockGroup).resources("leasecandidates"),
		verbs(read...).groups(legacyGroup).resources("nodes"),
		verbs("get", "list", "watch", "delete").groups(legacyGroup).resources("pods"),
		verbs("create").groups(legacyGroup).resources("pods/binding", "bindings"),
		verbs("patch", "update").groups(legacyGroup).resources("pods/status"),
		verbs(read...).groups(legacyGroup).resources("replicationcontrollers", "services"),
		verbs(read...).groups(appsGroup, extensionsGroup).resources("replicasets"),
		verbs(read...).groups(appsGroup).resources("statefulsets"),
		verbs(read...).groups(policyGroup).resources("poddisruptionbudgets"),
		verbs(read...).groups(legacyGroup).resources("persistentvolumeclaims", "persistentvolumes"),
		verbs("create").groups(authenticationGroup).resources("tokenreviews"),
		verbs("create").groups(authorizationGroup).resources("subjectaccessreviews"),
		verbs(read...).groups(storageGroup).resources("csinodes"),
		verbs(read...).groups(storageGroup).resources("volumeattachments"),
		verbs(read...).groups(legacyGroup).resources("namespaces"),
		verbs(read...).groups(storageGroup).resources("csidrivers"),
		verbs(read...).groups(storageGroup).resources("csistoragecapacities"),
		verbs(read...).groups(resourceGroup).resources("deviceclasses"),
		verbs("get", "list", "watch", "update", "patch").groups(resourceGroup).resources("resourceclaims"),
		verbs("get", "list", "watch", "update", "patch").groups(resourceGroup).resources("resourceclaims/status"),
		verbs("update").groups(legacyGroup).resources("pods/finalizers"),
		verbs(read...).groups(resourceGroup).resources("resourceslices"),
		verbs("create", "delete").groups(resourceGroup).resources("resourceclaims"),
		verbs(read...).groups(resourceGroup).resources("devicetaintrules"),
		verbs("update", "patch").groups(resourceGroup).resources("resourceclaims/binding"),
	)
}

// NodeRules are what the Node authorizer allows kubelets beyond the objects
// it reaches through its graph: the rules of the system:node ClusterRole.
func NodeRules() []rbacv1.PolicyRule { return nodeRules() }

// nodeRules are the kubelets' rules; kube narrows them further with the
// Node authorizer and the NodeRestriction admission plugin.
func nodeRules() []rbacv1.PolicyRule {
	return rules(
		verbs("create").groups(authenticationGroup).resources("tokenreviews"),
		verbs("create").groups(authorizationGroup).resources("subjectaccessreviews", "localsubjectaccessreviews"),
		verbs(read...).groups(legacyGroup).resources("services"),
		verbs("create", "get", "list", "watch").groups(legacyGroup).resources("nodes"),
		verbs("update", "patch").groups(legacyGroup).resources("nodes/status"),
		verbs("update", "patch").groups(legacyGroup).resources("nodes"),
		verbs("create", "update", "patch").groups(legacyGroup, eventsGroup).resources("events"),
		verbs(read...).groups(legacyGroup).resources("pods"),
		verbs("create", "delete").groups(legacyGroup).resources("pods"),
		verbs("update", "patch").groups(legacyGroup).resources("pods/status"),
		verbs("create").groups(legacyGroup).resources("pods/eviction"),
		verbs(read...).groups(legacyGroup).resources("secrets", "configmaps"),
		verbs("get").groups(legacyGroup).resources("persistentvolumeclaims", "persistentvolumes"),
		verbs("get").groups(legacyGroup).resources("endpoints"),
		verbs("create", "get", "list", "watch").groups(certificatesGroup).resources("certificatesigningrequests"),
		verbs("get", "create", "update", "patch", "delete").groups(leaderLockGroup).resources("leases"),
		verbs("get").groups(storageGroup).resources("volumeattachments"),
		verbs("create").groups(legacyGroup).resources("serviceaccounts/token"),
		verbs("get", "update", "patch").groups(legacyGroup).resources("persistentvolumeclaims/status"),
		verbs(read...).groups(storageGroup).resources("csidrivers"),
		verbs("get", "create", "update", "patch", "delete").groups(storageGroup).resources("csinodes"),
		verbs(read...).groups(nodeGroup).resources("runtimeclasses"),
		verbs("get").groups(resourceGroup).resources("resourceclaims"),
		verbs("deletecollection").groups(resourceGroup).resources("resourceslices"),
		verbs(read...).groups(certificatesGroup).resources("clustertrustbundles"),
		verbs("get").groups(legacyGroup).resources("serviceaccounts"),
		verbs("create", "get", "list", "watch").groups(certificatesGroup).resources("podcertificaterequests"),
	)
}
