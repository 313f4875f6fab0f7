package bootstrap

import rbacv1 "k8s.io/api/rbac/v1"

// viewRules are what view may do: read most namespaced objects, but not
// secrets nor anything that would let one escalate.
func viewRules() []rbacv1.PolicyRule {
	return rules(
		verbs(read...).groups(legacyGroup).resources("pods", "replicationcontrollers", "replicationcontrollers/scale",
			"serviceaccounts", "services", "services/status", "endpoints", "persistentvolumeclaims",
			"persistentvolumeclaims/status", "configmaps"),
		verbs(read...).groups(legacyGroup).resources("limitranges", "resourcequotas", "bindings", "pods/status",
			"resourcequotas/status", "namespaces/status", "replicationcontrollers/status", "pods/log"),
		// Reading namespaces in a namespace means reading that one: a hint
		// of which namespaces one may use.
		verbs(read...).groups(legacyGroup).resources("namespaces"),
		verbs(read...).groups(legacyGroup, eventsGroup).resources("events"),
		verbs(read...).groups(discoveryGroup).resources("endpointslices"),
		verbs(read...).groups(appsGroup).resources("controllerrevisions",
			"statefulsets", "statefulsets/status", "statefulsets/scale",
			"daemonsets", "daemonsets/status",
			"deployments", "deployments/status", "deployments/scale",
			"replicasets", "replicasets/status", "replicasets/scale"),
		verbs(read...).groups(autoscalingGroup).resources("horizontalpodautoscalers", "horizontalpodautoscalers/status"),
		verbs(read...).groups(batchGroup).resources("jobs", "cronjobs", "cronjobs/status", "jobs/status"),
		verbs(read...).groups(extensionsGroup).resources("daemonsets", "daemonsets/status", "deployments",
			"deployments/scale", "deployments/status", "ingresses", "ingresses/status", "replicasets",
			"replicasets/scale", "replicasets/status", "replicationcontrollers/scale", "networkpolicies"),
		verbs(read...).groups(policyGroup).resources("poddisruptionbudgets", "poddisruptionbudgets/status"),
		verbs(read...).groups(networkingGroup).resources("networkpolicies", "ingresses", "ingresses/status"),
		verbs(read...).groups(resourceGroup).resources("resourceclaims", "resourceclaims/status", "resourceclaimtemplates"),
	)
}

// editRules are what edit adds to view: write workloads and their
// configuration, read secrets, exec into pods. Not roles nor bindings.
func editRules() []rbacv1.PolicyRule {
	return rules(
		verbs(read...).groups(legacyGroup).resources("pods/attach", "pods/proxy", "pods/exec", "pods/portforward",
			"secrets", "services/proxy"),
		verbs("impersonate").groups(legacyGroup).resources("serviceaccounts"),
		verbs(write...).groups(legacyGroup).resources("pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward"),
		verbs("create").groups(legacyGroup).resources("pods/eviction"),
		verbs(write...).groups(legacyGroup).resources("replicationcontrollers", "replicationcontrollers/scale",
			"serviceaccounts", "services", "services/proxy", "persistentvolumeclaims", "configmaps", "secrets"),
		verbs("create").groups(legacyGroup).resources("serviceaccounts/token"),
		verbs(write...).groups(legacyGroup, eventsGroup).resources("events"),
		verbs(write...).groups(appsGroup).resources("statefulsets", "statefulsets/scale", "daemonsets",
			"deployments", "deployments/scale", "deployments/rollback", "replicasets", "replicasets/scale"),
		verbs(write...).groups(autoscalingGroup).resources("horizontalpodautoscalers"),
		verbs(write...).groups(batchGroup).resources("jobs", "cronjobs"),
		verbs(write...).groups(extensionsGroup).resources("daemonsets", "deployments", "deployments/scale",
			"deployments/rollback", "ingresses", "replicasets", "replicasets/scale", "replicationcontrollers/scale",
			"networkpolicies"),
		verbs(write...).groups(policyGroup).resources("poddisruptionbudgets"),
		verbs(write...).groups(networkingGroup).resources("networkpolicies", "ingresses"),
		verbs(readWrite...).groups(coordinationGroup).resources("leases"),
		verbs(write...).groups(resourceGroup).resources("resourceclaims", "resourceclaimtemplates"),
	)
}

// componentRoles are the roles of cluster components and add-ons kube
// binds or ships by default.
func componentRoles() []rbacv1.ClusterRole {
	return []rbacv1.ClusterRole{
		clusterRole("system:heapster", nil, rules(
			verbs(read...).groups(legacyGroup).resources("events", "pods", "nodes", "namespaces"),
			verbs(read...).groups(extensionsGroup).resources("deployments"),
		)),
		clusterRole("system:node-problem-detector", nil, rules(
			verbs("get").groups(legacyGroup).resources("nodes"),
			verbs("patch").groups(legacyGroup).resources("nodes/status"),
			verbs("create", "update", "patch").groups(legacyGroup, eventsGroup).resources("events"),
		)),
		clusterRole("system:kubelet-api-admin", nil, rules(
			verbs(read...).groups(legacyGroup).resources("nodes"),
			verbs("proxy").groups(legacyGroup).resources("nodes"),
			verbs("*").groups(legacyGroup).resources("nodes/proxy", "nodes/metrics", "nodes/stats", "nodes/log"),
			verbs("*").groups(legacyGroup).resources("nodes/pods", "nodes/healthz", "nodes/configz"),
		)),
		clusterRole("system:node-bootstrapper", nil, rules(
			verbs("create", "get", "list", "watch").groups(certificatesGroup).resources("certificatesigningrequests"),
		)),
		clusterRole("system:auth-delegator", nil, rules(
			verbs("create").groups(authenticationGroup).resources("tokenreviews"),
			verbs("create").groups(authorizationGroup).resources("subjectaccessreviews"),
		)),
		clusterRole("system:kube-aggregator", nil, rules(
			verbs(read...).groups(legacyGroup).resources("services", "endpoints"),
		)),
		clusterRole("system:node-proxier", nil, rules(
			verbs("list", "watch").groups(legacyGroup).resources("services", "endpoints"),
			verbs(read...).groups(legacyGroup).resources("nodes"),
			verbs("create", "update", "patch").groups(legacyGroup, eventsGroup).resources("events"),
			verbs("list", "watch").groups(networkingGroup).resources("servicecidrs"),
			verbs("list", "watch").groups(discoveryGroup).resources("endpointslices"),
		)),
		clusterRole("system:kube-dns", nil, rules(
			verbs("list", "watch").groups(legacyGroup).resources("endpoints", "services"),
		)),
		clusterRole("system:persistent-volume-provisioner", nil, rules(
			verbs("get", "list", "watch", "create", "delete").groups(legacyGroup).resources("persistentvolumes"),
			verbs("get", "list", "watch", "update").groups(legacyGroup).resources("persistentvolumeclaims"),
			verbs(read...).groups(storageGroup).resources("storageclasses"),
			verbs("watch").groups(legacyGroup).resources("events"),
			verbs("create", "update", "patch").groups(legacyGroup, eventsGroup).resources("events"),
		)),
		clusterRole("system:volume-scheduler", nil, rules(
			verbs("get", "list", "watch", "update", "patch").groups(legacyGroup).resources("persistentvolumes"),
			verbs(read...).groups(storageGroup).resources("storageclasses"),
			verbs("get", "list", "watch", "update", "patch").groups(legacyGroup).resources("persistentvolumeclaims"),
		)),
		clusterRole("system:service-account-issuer-discovery", nil, rules(verbs("get").urls(
			"/.well-known/openid-configuration", "/.well-known/openid-configuration/",
			"/openid/v1/jwks", "/openid/v1/jwks/"))),
		clusterRole("system:cluster-trust-bundle-discovery", nil, rules(
			verbs(read...).groups(certificatesGroup).resources("clustertrustbundles"),
		)),
		clusterRole("system:certificates.k8s.io:certificatesigningrequests:nodeclient", nil, rules(
			verbs("create").groups(certificatesGroup).resources("certificatesigningrequests/nodeclient"),
		)),
		clusterRole("system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", nil, rules(
			verbs("create").groups(certificatesGroup).resources("certificatesigningrequests/selfnodeclient"),
		)),
		signerApprover("kube-apiserver-client-approver", "kubernetes.io/kube-apiserver-client"),
		signerApprover("kube-apiserver-client-kubelet-approver", "kubernetes.io/kube-apiserver-client-kubelet"),
		signerApprover("kubelet-serving-approver", "kubernetes.io/kubelet-serving"),
		signerApprover("legacy-unknown-approver", "kubernetes.io/legacy-unknown"),
	}
}

// signerApprover may approve certificate signing requests for one signer.
func signerApprover(name, signer string) rbacv1.ClusterRole {
	return clusterRole("system:certificates.k8s.io:"+name, nil, rules(
		verbs("approve").groups(certificatesGroup).resources("signers").names(signer),
	))
}
