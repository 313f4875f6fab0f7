// Package bootstrap is kube-apiserver's initial API Priority and Fairness
// configuration: the mandatory priority levels and flow schemas every server
// must have (exempt, catch-all) and the suggested ones it creates besides.
// Every function returns fresh objects the caller may change.
package bootstrap

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/authn"
)

// Well-known users and groups the suggested flow schemas name.
const (
	kubeControllerManager = "system:kube-controller-manager"
	kubeScheduler         = "system:kube-scheduler"
	nodesGroup            = "system:nodes"
	serviceAccountsGroup  = "system:serviceaccounts"
)

// MandatoryPriorityLevelConfigurations are catch-all and exempt. Their specs
// are fixed (exempt's spec.exempt aside) and restored at every start.
func MandatoryPriorityLevelConfigurations() []*flowcontrolv1.PriorityLevelConfiguration {
	return []*flowcontrolv1.PriorityLevelConfiguration{
		limited(flowcontrolv1.PriorityLevelConfigurationNameCatchAll, 5, 0, nil),
		level(flowcontrolv1.PriorityLevelConfigurationNameExempt, flowcontrolv1.PriorityLevelConfigurationSpec{
			Type:   flowcontrolv1.PriorityLevelEnablementExempt,
			Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{NominalConcurrencyShares: ptr(0), LendablePercent: ptr(0)},
		}),
	}
}

// MandatoryFlowSchemas are exempt (system:masters goes unlimited) and
// catch-all (whatever no other schema matches).
func MandatoryFlowSchemas() []*flowcontrolv1.FlowSchema {
	return []*flowcontrolv1.FlowSchema{
		schema("exempt", flowcontrolv1.PriorityLevelConfigurationNameExempt, 1, "",
			everything(groups(authn.SystemPrivilegedGroup))),
		schema(flowcontrolv1.FlowSchemaNameCatchAll, flowcontrolv1.PriorityLevelConfigurationNameCatchAll, 10000, byUser,
			everything(groups(authn.AllUnauthenticated, authn.AllAuthenticated))),
	}
}

// SuggestedPriorityLevelConfigurations are the other priority levels kube
// creates, from the most to the least important traffic.
func SuggestedPriorityLevelConfigurations() []*flowcontrolv1.PriorityLevelConfiguration {
	return []*flowcontrolv1.PriorityLevelConfiguration{
		// Kubelets and kube-proxy: the cluster's self-maintenance.
		limited("system", 30, 33, queuing(64, 6)),
		// Node health, apart from "system" so that it gets through pod
		// start-up storms.
		limited("node-high", 40, 25, queuing(64, 6)),
		limited("leader-election", 10, 0, queuing(16, 4)),
		// kube-scheduler, the built-in workload controllers.
		limited("workload-high", 40, 50, queuing(128, 6)),
		// Other service accounts.
		limited("workload-low", 100, 90, queuing(128, 6)),
		// The rest of the traffic.
		limited("global-default", 20, 50, queuing(128, 6)),
	}
}

// SuggestedFlowSchemas are the other flow schemas kube creates, in kube's
// order.
func SuggestedFlowSchemas() []*flowcontrolv1.FlowSchema {
	anyone := func() []flowcontrolv1.Subject { return groups(authn.AllUnauthenticated, authn.AllAuthenticated) }
	kubeSystemSAs := func() []flowcontrolv1.Subject { return serviceAccounts(metav1.NamespaceSystem, flowcontrolv1.NameAll) }
	return []*flowcontrolv1.FlowSchema{
		schema("system-nodes", "system", 500, byUser, everything(groups(nodesGroup))),
		schema("system-node-high", "node-high", 400, byUser, flowcontrolv1.PolicyRulesWithSubjects{
			Subjects: groups(nodesGroup),
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{
				{Verbs: wildcard(), APIGroups: []string{""}, Resources: []string{"nodes", "nodes/status"}, Namespaces: wildcard(), ClusterScope: true},
				{Verbs: wildcard(), APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Namespaces: wildcard()},
			},
		}),
		// Probes are exempt, so that a busy server still answers them.
		schema("probes", flowcontrolv1.PriorityLevelConfigurationNameExempt, 2, "", flowcontrolv1.PolicyRulesWithSubjects{
			Subjects: anyone(),
			NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{
				{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz", "/readyz", "/livez"}},
			},
		}),
		schema("system-leader-election", "leader-election", 100, byUser, flowcontrolv1.PolicyRulesWithSubjects{
			Subjects: append(users(kubeControllerManager, kubeScheduler), kubeSystemSAs()...),
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{
				{Verbs: []string{"get", "create", "update"}, APIGroups: []string{"coordination.k8s.io"},
					Resources: []string{"leases"}, Namespaces: wildcard()},
			},
		}),
		schema("kube-controller-manager", "workload-high", 800, byNamespace, everything(users(kubeControllerManager))),
		schema("kube-scheduler", "workload-high", 800, byNamespace, everything(users(kubeScheduler))),
		schema("kube-system-service-accounts", "workload-high", 900, byNamespace, everything(kubeSystemSAs())),
		schema("service-accounts", "workload-low", 9000, byUser, everything(groups(serviceAccountsGroup))),
		schema("global-default", "global-default", 9900, byUser, everything(anyone())),
	}
}

const (
	byUser      = flowcontrolv1.FlowDistinguisherMethodByUserType
	byNamespace = flowcontrolv1.FlowDistinguisherMethodByNamespaceType
)

// wildcard is a new list of "*", which matches every verb, API group,
// resource, namespace and non-resource URL alike.
func wildcard() []string { return []string{"*"} }

func ptr(i int32) *int32 { return &i }

// bootstrapMeta names an object the server manages: the annotation tells
// the reconciler it may keep the spec up to date.
func bootstrapMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Annotations: map[string]string{flowcontrolv1.AutoUpdateAnnotationKey: "true"}}
}

func level(name string, spec flowcontrolv1.PriorityLevelConfigurationSpec) *flowcontrolv1.PriorityLevelConfiguration {
	return &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: bootstrapMeta(name), Spec: spec}
}

// limited is a Limited priority level; it rejects what exceeds its share
// when q is nil, and queues it otherwise.
func limited(name string, shares, lendable int32, q *flowcontrolv1.QueuingConfiguration) *flowcontrolv1.PriorityLevelConfiguration {
	response := flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}
	if q != nil {
		response = flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue, Queuing: q}
	}
	return level(name, flowcontrolv1.PriorityLevelConfigurationSpec{
		Type: flowcontrolv1.PriorityLevelEnablementLimited,
		Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			NominalConcurrencyShares: ptr(shares), LendablePercent: ptr(lendable), LimitResponse: response,
		},
	})
}

// queuing has the queue length limit of every suggested level.
func queuing(queues, handSize int32) *flowcontrolv1.QueuingConfiguration {
	return &flowcontrolv1.QueuingConfiguration{Queues: queues, HandSize: handSize, QueueLengthLimit: 50}
}

func schema(name, level string, precedence int32, method flowcontrolv1.FlowDistinguisherMethodType,
	rules flowcontrolv1.PolicyRulesWithSubjects) *flowcontrolv1.FlowSchema {
	fs := &flowcontrolv1.FlowSchema{
		ObjectMeta: bootstrapMeta(name),
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: level},
			MatchingPrecedence:         precedence,
			Rules:                      []flowcontrolv1.PolicyRulesWithSubjects{rules},
		},
	}
	if method != "" {
		fs.Spec.DistinguisherMethod = &flowcontrolv1.FlowDistinguisherMethod{Type: method}
	}
	return fs
}

// everything matches every request of subjects: any verb on any resource,
// cluster-scoped or in any namespace, and any non-resource URL.
func everything(subjects []flowcontrolv1.Subject) flowcontrolv1.PolicyRulesWithSubjects {
	return flowcontrolv1.PolicyRulesWithSubjects{
		Subjects: subjects,
		ResourceRules: []flowcontrolv1.ResourcePolicyRule{
			{Verbs: wildcard(), APIGroups: wildcard(), Resources: wildcard(), Namespaces: wildcard(), ClusterScope: true},
		},
		NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: wildcard(), NonResourceURLs: wildcard()}},
	}
}

func groups(names ...string) []flowcontrolv1.Subject {
	out := make([]flowcontrolv1.Subject, 0, len(names))
	for _, n := range names {
		out = append(out, flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: n}})
	}
	return out
}

func users(names ...string) []flowcontrolv1.Subject {
	out := make([]flowcontrolv1.Subject, 0, len(names))
	for _, n := range names {
		out = append(out, flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: n}})
	}
	return out
}

func serviceAccounts(namespace string, names ...string) []flowcontrolv1.Subject {
	out := make([]flowcontrolv1.Subject, 0, len(names))
	for _, n := range names {
		out = append(out, flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindServiceAccount,
			ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: namespace, Name: n}})
	}
	return out
}
