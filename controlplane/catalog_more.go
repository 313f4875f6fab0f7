package controlplane

import (
	"context"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-io/capstan/admission/priority"
	"github.com/capstan-io/capstan/apis/certificates"
	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/apis/node"
	"github.com/capstan-io/capstan/apis/scheduling"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/endpoints"
	"github.com/capstan-io/capstan/internal/parallel"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/server"
)

// Group priorities of the cluster groups, as kube's APIService priorities.
const (
	priorityScheduling   = 16600
	priorityNode         = 16300
	priorityCertificates = 17300
)

// coreClusterSpecs are the core/v1 resources of nodes, volumes and quotas,
// at kube's keys (nodes are still stored as minions).
func coreClusterSpecs() []resourceSpec {
	return []resourceSpec{
		{name: "nodes", kind: "Node", keyPrefix: "/minions", strategy: core.NodeStrategy{}, shortNames: []string{"no"},
			status: core.NodeStatusStrategy{},
			new:    func() runtime.Object { return &corev1.Node{} }, newList: func() runtime.Object { return &corev1.NodeList{} }},
		{name: "persistentvolumes", kind: "PersistentVolume", strategy: core.PersistentVolumeStrategy{}, shortNames: []string{"pv"},
			status:  core.PersistentVolumeStatusStrategy{},
			new:     func() runtime.Object { return &corev1.PersistentVolume{} },
			newList: func() runtime.Object { return &corev1.PersistentVolumeList{} }},
		{name: "persistentvolumeclaims", kind: "PersistentVolumeClaim", strategy: core.PersistentVolumeClaimStrategy{},
			shortNames: []string{"pvc"}, status: core.PersistentVolumeClaimStatusStrategy{},
			new:     func() runtime.Object { return &corev1.PersistentVolumeClaim{} },
			newList: func() runtime.Object { return &corev1.PersistentVolumeClaimList{} }},
		{name: "limitranges", kind: "LimitRange", strategy: core.LimitRangeStrategy{}, shortNames: []string{"limits"},
			new: func() runtime.Object { return &corev1.LimitRange{} }, newList: func() runtime.Object { return &corev1.LimitRangeList{} }},
		{name: "resourcequotas", kind: "ResourceQuota", strategy: core.ResourceQuotaStrategy{}, shortNames: []string{"quota"},
			status: core.ResourceQuotaStatusStrategy{},
			new:    func() runtime.Object { return &corev1.ResourceQuota{} }, newList: func() runtime.Object { return &corev1.ResourceQuotaList{} }},
	}
}

// schedulingGroup is scheduling.k8s.io/v1.
func (f *storeBuilder) schedulingGroup() (builtGroup, error) {
	specs := []resourceSpec{
		{name: "priorityclasses", kind: "PriorityClass", strategy: scheduling.PriorityClassStrategy{}, shortNames: []string{"pc"},
			new:     func() runtime.Object { return &schedulingv1.PriorityClass{} },
			newList: func() runtime.Object { return &schedulingv1.PriorityClassList{} }},
	}
	return f.buildGroup(schedulingv1.GroupName, priorityScheduling, schedulingv1.SchemeGroupVersion, specs)
}

// nodeGroup is node.k8s.io/v1.
func (f *storeBuilder) nodeGroup() (builtGroup, error) {
	specs := []resourceSpec{
		{name: "runtimeclasses", kind: "RuntimeClass", strategy: node.RuntimeClassStrategy{},
			new: func() runtime.Object { return &nodev1.RuntimeClass{} }, newList: func() runtime.Object { return &nodev1.RuntimeClassList{} }},
	}
	return f.buildGroup(nodev1.GroupName, priorityNode, nodev1.SchemeGroupVersion, specs)
}

// certificatesGroup is certificates.k8s.io/v1, with the approval
// subresource of requests besides their status.
func (f *storeBuilder) certificatesGroup(az authz.Authorizer) (builtGroup, error) {
	specs := []resourceSpec{
		{name: "certificatesigningrequests", kind: "CertificateSigningRequest", strategy: certificates.CSRStrategy{},
			shortNames: []string{"csr"}, status: certificates.CSRStatusStrategy{},
			new:     func() runtime.Object { return &certificatesv1.CertificateSigningRequest{} },
			newList: func() runtime.Object { return &certificatesv1.CertificateSigningRequestList{} }},
	}
	specs = append(specs, trustSpecs(az)...)
	bg, err := f.buildGroup(certificatesv1.GroupName, priorityCertificates, certificatesv1.SchemeGroupVersion, specs)
	if err != nil {
		return bg, err
	}
	v := &bg.group.Versions[0]
	for i := range v.Resources {
		if v.Resources[i].Name == "certificatesigningrequests" {
			// The main resource changes neither spec nor status.
			v.Resources[i].ResetFields = []string{"spec", "status"}
		}
	}
	v.Resources = append(v.Resources, endpoints.Resource{
		Name: "certificatesigningrequests/approval", Kind: "CertificateSigningRequest",
		Storage: bg.stores["certificatesigningrequests"].Subresource(certificates.CSRApprovalStrategy{}), ResetFields: []string{"spec"},
	})
	return bg, f.addBetas(&bg, certificatesv1.SchemeGroupVersion, specs, betaGV{certificatesv1beta1.SchemeGroupVersion, map[string]betaKind{
		"clustertrustbundles":    kindOf[certificatesv1beta1.ClusterTrustBundle, certificatesv1beta1.ClusterTrustBundleList](),
		"podcertificaterequests": kindOf[certificatesv1beta1.PodCertificateRequest, certificatesv1beta1.PodCertificateRequestList](),
	}})
}

// installPriorityClasses adds the post-start hook that creates the
// system priority classes.
func (c Config) installPriorityClasses(s *server.Server) {
	s.AddPostStartHook("scheduling/bootstrap-system-priority-classes", c.ensureSystemPriorityClasses)
}

// priorityPlugin is the Priority plugin over the priority classes' store.
func priorityPlugin(d admissionDeps) *priority.Plugin {
	return priority.New(priorityClassLister(d.store(schedulingv1.GroupName, "priorityclasses")))
}

func priorityClassLister(store *registry.Store) priority.Lister {
	return func(ctx context.Context) ([]schedulingv1.PriorityClass, error) {
		obj, err := store.List(ctx, &rest.ListOptions{})
		if err != nil {
			return nil, err
		}
		return obj.(*schedulingv1.PriorityClassList).Items, nil
	}
}

// ensureSystemPriorityClasses creates the system priority classes through
// the API, as kube's bootstrap hook does, retrying until they exist.
func (c Config) ensureSystemPriorityClasses(hc server.HookContext) error {
	client, err := kubernetes.NewForConfig(hc.LoopbackClientConfig)
	if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(hc, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var work []func() error
		for _, pc := range scheduling.SystemPriorityClasses() {
			work = append(work, func() error {
				_, err := client.SchedulingV1().PriorityClasses().Get(ctx, pc.Name, metav1.GetOptions{})
				if apierrors.IsNotFound(err) {
					_, err = client.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{})
				}
				if err != nil && !apierrors.IsAlreadyExists(err) {
					c.Logger.Debug("creating system priority class", "name", pc.Name, "err", err)
					return err
				}
				return nil
			})
		}
		return parallel.Do(0, work...) == nil, nil
	})
}
