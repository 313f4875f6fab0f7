package controlplane

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/apis/apps"
	"github.com/capstan-io/capstan/apis/batch"
	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/endpoints"
	"github.com/capstan-io/capstan/registry"
)

// Group priorities of the workload groups, as kube's APIService priorities.
const (
	priorityApps  = 17800
	priorityBatch = 17400
)

var (
	autoscalingV1 = autoscalingv1.SchemeGroupVersion
	policyV1      = policyv1.SchemeGroupVersion
	categoryAll   = []string{"all"}
)

// coreWorkloadSpecs are the workload resources of core/v1.
func coreWorkloadSpecs(policy core.PodPolicy) []resourceSpec {
	return []resourceSpec{
		{name: "pods", kind: "Pod", strategy: core.PodStrategy{Policy: policy}, shortNames: []string{"po"}, categories: categoryAll,
			new: func() runtime.Object { return &corev1.Pod{} }, newList: func() runtime.Object { return &corev1.PodList{} },
			status: core.PodStatusStrategy{}, returnDeleted: true},
		{name: "podtemplates", kind: "PodTemplate", strategy: core.PodTemplateStrategy{Policy: policy},
			new: func() runtime.Object { return &corev1.PodTemplate{} }, newList: func() runtime.Object { return &corev1.PodTemplateList{} }},
		{name: "replicationcontrollers", kind: "ReplicationController", keyPrefix: "/controllers",
			strategy: core.ReplicationControllerStrategy{Policy: policy}, shortNames: []string{"rc"}, categories: categoryAll,
			new:     func() runtime.Object { return &corev1.ReplicationController{} },
			newList: func() runtime.Object { return &corev1.ReplicationControllerList{} },
			status:  core.ReplicationControllerStatusStrategy{},
			scale:   &registry.ScaleAccessor{Get: core.ReplicationControllerScale, Set: core.SetReplicationControllerReplicas}},
	}
}

// podSubresources are pods/binding, pods/eviction (which consults budgets),
// pods/ephemeralcontainers and pods/resize.
func podSubresources(pods *registry.Store, budgets core.DisruptionBudgets, policy core.PodPolicy) []endpoints.Resource {
	return []endpoints.Resource{
		{Name: "pods/binding", Kind: "Binding", Storage: core.NewBindingREST(pods), NoFieldManager: true},
		{Name: "pods/eviction", Kind: "Eviction", KindGroupVersion: &policyV1, Storage: core.NewEvictionREST(pods, budgets), NoFieldManager: true},
		{Name: "pods/ephemeralcontainers", Kind: "Pod", Storage: pods.Subresource(core.EphemeralContainersStrategy{PodStrategy: core.PodStrategy{Policy: policy}}),
			Defaulter: defaulter(core.PodStrategy{})},
		{Name: "pods/resize", Kind: "Pod", Storage: pods.Subresource(core.PodResizeStrategy{PodStrategy: core.PodStrategy{Policy: policy}}),
			Defaulter: defaulter(core.PodStrategy{})},
	}
}

// WorkloadPolicy is what the cluster allows pods and workloads to ask for.
type WorkloadPolicy struct {
	// Pods is --allow-privileged.
	Pods core.PodPolicy
	// StatefulSetRecreate is kube's StatefulSetRecreateStrategy feature
	// gate (alpha, off by default).
	StatefulSetRecreate bool
}

// appsGroup is apps/v1.
func (f *storeBuilder) appsGroup(w WorkloadPolicy) (builtGroup, error) {
	policy := w.Pods
	scale := &registry.ScaleAccessor{Get: apps.ScaleOf, Set: apps.SetReplicas}
	specs := []resourceSpec{
		{name: "deployments", kind: "Deployment", strategy: apps.DeploymentStrategy{Policy: policy}, shortNames: []string{"deploy"},
			categories: categoryAll, status: apps.DeploymentStatusStrategy{}, scale: scale,
			new: func() runtime.Object { return &appsv1.Deployment{} }, newList: func() runtime.Object { return &appsv1.DeploymentList{} }},
		{name: "replicasets", kind: "ReplicaSet", strategy: apps.ReplicaSetStrategy{Policy: policy}, shortNames: []string{"rs"},
			categories: categoryAll, status: apps.ReplicaSetStatusStrategy{}, scale: scale,
			new: func() runtime.Object { return &appsv1.ReplicaSet{} }, newList: func() runtime.Object { return &appsv1.ReplicaSetList{} }},
		{name: "statefulsets", kind: "StatefulSet", strategy: apps.StatefulSetStrategy{Policy: policy, RecreateStrategy: w.StatefulSetRecreate}, shortNames: []string{"sts"},
			categories: categoryAll, status: apps.StatefulSetStatusStrategy{}, scale: scale,
			new: func() runtime.Object { return &appsv1.StatefulSet{} }, newList: func() runtime.Object { return &appsv1.StatefulSetList{} }},
		{name: "daemonsets", kind: "DaemonSet", strategy: apps.DaemonSetStrategy{Policy: policy}, shortNames: []string{"ds"},
			categories: categoryAll, status: apps.DaemonSetStatusStrategy{},
			new: func() runtime.Object { return &appsv1.DaemonSet{} }, newList: func() runtime.Object { return &appsv1.DaemonSetList{} }},
		{name: "controllerrevisions", kind: "ControllerRevision", strategy: apps.ControllerRevisionStrategy{},
			new: func() runtime.Object { return &appsv1.ControllerRevision{} }, newList: func() runtime.Object { return &appsv1.ControllerRevisionList{} }},
	}
	return f.buildGroup(appsv1.GroupName, priorityApps, appsv1.SchemeGroupVersion, specs)
}

// batchGroup is batch/v1.
func (f *storeBuilder) batchGroup(policy core.PodPolicy) (builtGroup, error) {
	specs := []resourceSpec{
		{name: "jobs", kind: "Job", strategy: batch.JobStrategy{Policy: policy}, categories: categoryAll, status: batch.JobStatusStrategy{},
			new: func() runtime.Object { return &batchv1.Job{} }, newList: func() runtime.Object { return &batchv1.JobList{} }},
		{name: "cronjobs", kind: "CronJob", strategy: batch.CronJobStrategy{Policy: policy}, shortNames: []string{"cj"},
			categories: categoryAll, status: batch.CronJobStatusStrategy{},
			new: func() runtime.Object { return &batchv1.CronJob{} }, newList: func() runtime.Object { return &batchv1.CronJobList{} }},
	}
	return f.buildGroup(batchv1.GroupName, priorityBatch, batchv1.SchemeGroupVersion, specs)
}
