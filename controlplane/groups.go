package controlplane

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/apis/coordination"
	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/apis/events"
	"github.com/capstan-io/capstan/endpoints"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/server"
)

// Group priorities, as kube's APIService priorities order /apis.
const (
	priorityEvents       = 17750
	priorityCoordination = 16500
)

// builtGroup is an installed group and the stores other parts of the
// control plane need (admission reads namespaces).
type builtGroup struct {
	group  endpoints.APIGroup
	stores map[string]*registry.Store
}

// coreGroup is core/v1; evictions consult budgets.
func (f *storeBuilder) coreGroup(eventTTL time.Duration, budgets core.DisruptionBudgets, policy core.PodPolicy, kubelets *core.Kubelets,
	checks []server.HealthCheck) (builtGroup, error) {
	gv := corev1.SchemeGroupVersion
	specs := []resourceSpec{
		{name: "namespaces", kind: "Namespace", strategy: core.NamespaceStrategy{}, shortNames: []string{"ns"},
			new: func() runtime.Object { return &corev1.Namespace{} }, newList: func() runtime.Object { return &corev1.NamespaceList{} },
			status: core.NamespaceStatusStrategy{}, returnDeleted: true},
		{name: "configmaps", kind: "ConfigMap", strategy: core.ConfigMapStrategy{}, shortNames: []string{"cm"},
			new: func() runtime.Object { return &corev1.ConfigMap{} }, newList: func() runtime.Object { return &corev1.ConfigMapList{} }},
		{name: "secrets", kind: "Secret", strategy: core.SecretStrategy{},
			new: func() runtime.Object { return &corev1.Secret{} }, newList: func() runtime.Object { return &corev1.SecretList{} }},
		{name: "serviceaccounts", kind: "ServiceAccount", strategy: core.ServiceAccountStrategy{}, shortNames: []string{"sa"},
			new: func() runtime.Object { return &corev1.ServiceAccount{} }, newList: func() runtime.Object { return &corev1.ServiceAccountList{} }},
		{name: "events", kind: "Event", strategy: core.EventStrategy{}, shortNames: []string{"ev"}, ttl: fixedTTL(eventTTL),
			new: func() runtime.Object { return &corev1.Event{} }, newList: func() runtime.Object { return &corev1.EventList{} }},
	}
	specs = append(specs, coreWorkloadSpecs(policy)...)
	specs = append(specs, coreClusterSpecs()...)
	bg, err := f.buildGroup("", 0, gv, specs)
	if err != nil {
		return bg, err
	}
	// kube serves no deletecollection of namespaces.
	for i := range bg.group.Versions[0].Resources {
		if r := &bg.group.Versions[0].Resources[i]; r.Name == "namespaces" {
			r.Storage = withoutDeleteCollection{bg.stores["namespaces"]}
		}
	}
	// namespaces/finalize takes only updates, of spec.finalizers.
	finalize := endpoints.Resource{Name: "namespaces/finalize", Kind: "Namespace",
		Storage: bg.stores["namespaces"].UpdateOnly(core.NamespaceFinalizeStrategy{})}
	v := &bg.group.Versions[0]
	v.Resources = append(v.Resources, finalize)
	v.Resources = append(v.Resources, podSubresources(bg.stores["pods"], budgets, policy)...)
	if kubelets != nil {
		kubelets.Pods, kubelets.Nodes = bg.stores["pods"], bg.stores["nodes"]
		v.Resources = append(v.Resources, kubeletSubresources(kubelets)...)
	}
	v.Resources = append(v.Resources, legacyCoreResources(bg.stores["pods"], checks)...)
	return bg, nil
}

// eventsGroup is events.k8s.io/v1, stored as core/v1 Events
// (kubeStorageVersions).
func (f *storeBuilder) eventsGroup(eventTTL time.Duration) (builtGroup, error) {
	specs := []resourceSpec{
		{name: "events", kind: "Event", strategy: events.EventStrategy{}, shortNames: []string{"ev"},
			ttl: fixedTTL(eventTTL),
			new: func() runtime.Object { return &eventsv1.Event{} }, newList: func() runtime.Object { return &eventsv1.EventList{} }},
	}
	return f.buildGroup(eventsv1.GroupName, priorityEvents, eventsv1.SchemeGroupVersion, specs)
}

// coordinationGroup is coordination.k8s.io/v1, and v1beta1 when
// --runtime-config turns it on: leasecandidates, which have no GA version
// and so a storage of their own, at v1beta1 as in kube.
func (f *storeBuilder) coordinationGroup() (builtGroup, error) {
	specs := []resourceSpec{
		{name: "leases", kind: "Lease", strategy: coordination.LeaseStrategy{},
			new: func() runtime.Object { return &coordinationv1.Lease{} }, newList: func() runtime.Object { return &coordinationv1.LeaseList{} }},
	}
	bg, err := f.buildGroup(coordinationv1.GroupName, priorityCoordination, coordinationv1.SchemeGroupVersion, specs)
	if err != nil {
		return bg, err
	}
	beta := coordinationv1beta1.SchemeGroupVersion
	candidates := endpoints.GroupVersion{Version: beta.Version, Resources: []endpoints.Resource{{Name: "leasecandidates"}}}
	if f.apis.ResourceOn(beta.WithResource("leasecandidates")) {
		_, candidates.Resources, err = f.build(beta, resourceSpec{name: "leasecandidates", kind: "LeaseCandidate",
			strategy: coordination.LeaseCandidateStrategy{},
			new:      func() runtime.Object { return &coordinationv1beta1.LeaseCandidate{} },
			newList:  func() runtime.Object { return &coordinationv1beta1.LeaseCandidateList{} }})
		if err != nil {
			return bg, err
		}
	}
	bg.group.Versions = append(bg.group.Versions, candidates)
	return bg, nil
}

// buildGroup builds the stores and endpoint resources of one group version.
func (f *storeBuilder) buildGroup(group string, priority int, gv schema.GroupVersion, specs []resourceSpec) (builtGroup, error) {
	bg := builtGroup{stores: map[string]*registry.Store{}}
	version := endpoints.GroupVersion{Version: gv.Version}
	for _, spec := range specs {
		store, resources, err := f.build(gv, spec)
		if err != nil {
			return bg, err
		}
		bg.stores[spec.name] = store
		version.Resources = append(version.Resources, resources...)
	}
	bg.group = endpoints.APIGroup{Name: group, Priority: priority, Versions: []endpoints.GroupVersion{version}}
	return bg, nil
}

func fixedTTL(d time.Duration) func(runtime.Object) uint64 {
	if d <= 0 {
		return nil
	}
	return func(runtime.Object) uint64 { return uint64(d.Seconds()) }
}

// withoutDeleteCollection serves a store without its DeleteCollection: the
// method below, of another signature, hides the store's, so the wrapper is
// no rest.CollectionDeleter and discovery and routing offer no
// deletecollection.
type withoutDeleteCollection struct{ *registry.Store }

func (withoutDeleteCollection) DeleteCollection() {}
