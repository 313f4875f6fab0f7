package controlplane

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/admission/always"
	"github.com/capstan-io/capstan/admission/alwayspullimages"
	"github.com/capstan-io/capstan/admission/certificates"
	"github.com/capstan-io/capstan/admission/defaultclass"
	"github.com/capstan-io/capstan/admission/defaulttolerationseconds"
	"github.com/capstan-io/capstan/admission/denyserviceexternalips"
	"github.com/capstan-io/capstan/admission/extendedresourcetoleration"
	"github.com/capstan-io/capstan/admission/limitranger"
	"github.com/capstan-io/capstan/admission/namespaceexists"
	"github.com/capstan-io/capstan/admission/namespacelifecycle"
	"github.com/capstan-io/capstan/admission/nodedeclaredfeatures"
	"github.com/capstan-io/capstan/admission/nodetaint"
	"github.com/capstan-io/capstan/admission/plugins"
	"github.com/capstan-io/capstan/admission/podresize"
	"github.com/capstan-io/capstan/admission/podtopologylabels"
	"github.com/capstan-io/capstan/admission/pvcresize"
	"github.com/capstan-io/capstan/admission/runtimeclass"
	"github.com/capstan-io/capstan/admission/serviceaccount"
	"github.com/capstan-io/capstan/admission/storageprotection"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/request"
	"github.com/capstan-io/capstan/server"
)

// AdmissionConfig selects and configures the admission plugins.
type AdmissionConfig struct {
	// Plugins are the plugins to run and the AdmissionConfiguration; a nil
	// Plugins.Enabled is kube's default set.
	Plugins plugins.Selection
	// NotReadyTolerationSeconds and UnreachableTolerationSeconds are the
	// tolerations DefaultTolerationSeconds gives pods
	// (--default-not-ready-toleration-seconds, --default-unreachable-toleration-seconds).
	NotReadyTolerationSeconds    int64
	UnreachableTolerationSeconds int64
	// EndpointRouting sends webhook calls to a ready endpoint of their
	// Service rather than its cluster IP (--enable-aggregator-routing).
	EndpointRouting bool
}

// admissionDeps are what the built-in plugins are made from: the server
// (its authorizer, its post-start hooks) and the stores of the built-in
// resources.
type admissionDeps struct {
	server *server.Server
	groups []builtGroup
}

// store is the store of resource in group ("" for core), nil if not served.
func (d admissionDeps) store(group, resource string) *registry.Store {
	for _, g := range d.groups {
		if g.group.Name == group {
			return g.stores[resource]
		}
	}
	return nil
}

// installAdmission builds the admission chain the flags select
// (Config.Admission) from the plugins capstan implements, in kube's order.
func (c Config) installAdmission(s *server.Server, groups []builtGroup) error {
	d := admissionDeps{server: s, groups: groups}
	r := plugins.NewRegistry()
	c.registerAdmissionPlugins(r, d)
	sel := c.Admission.Plugins
	if sel.Enabled == nil {
		sel.Enabled = plugins.DefaultEnabled()
	}
	chain, err := r.Chain(sel, c.Logger)
	if err != nil {
		return err
	}
	for _, p := range chain {
		s.AddAdmissionPlugin(p)
	}
	return nil
}

// constant is a Factory of a plugin that takes no configuration.
func constant(p any) plugins.Factory {
	return func([]byte) (any, error) { return p, nil }
}

// registerAdmissionPlugins registers every built-in plugin capstan has.
func (c Config) registerAdmissionPlugins(r *plugins.Registry, d admissionDeps) {
	r.Register("AlwaysAdmit", constant(always.Admit{}))
	r.Register("AlwaysDeny", constant(always.Deny{}))
	namespaces := namespaceGetter(d.store("", "namespaces"))
	r.Register("NamespaceAutoProvision", constant(namespaceexists.NewAutoProvision(namespaceexists.Getter(namespaces), namespaceCreator(d.store("", "namespaces")))))
	r.Register("NamespaceExists", constant(namespaceexists.NewExists(namespaceexists.Getter(namespaces))))
	r.Register("ExtendedResourceToleration", constant(extendedresourcetoleration.Plugin{}))
	r.Register("NamespaceLifecycle", constant(namespacelifecycle.New(namespaceGetter(d.store("", "namespaces")))))
	r.Register("NodeRestriction", constant(nodeRestriction(d, c.Generic.Authorization)))
	r.Register("LimitRanger", constant(limitranger.New(limitRangeLister(d.store("", "limitranges")))))
	r.Register("ServiceAccount", constant(serviceaccount.New(serviceAccountGetter(d.store("", "serviceaccounts")))))
	r.Register("TaintNodesByCondition", constant(nodetaint.Plugin{}))
	r.Register("AlwaysPullImages", constant(alwayspullimages.Plugin{}))
	r.Register("PodSecurity", podSecurityPlugin(d))
	r.Register("Priority", constant(priorityPlugin(d)))
	r.Register("DefaultTolerationSeconds", constant(defaulttolerationseconds.New(c.Admission.NotReadyTolerationSeconds, c.Admission.UnreachableTolerationSeconds)))
	r.Register("DefaultStorageClass", constant(defaultclass.NewStorage(metaLister(d.store(storagev1.GroupName, "storageclasses")))))
	r.Register("StorageObjectInUseProtection", constant(storageprotection.Plugin{}))
	r.Register("PersistentVolumeClaimResize", constant(pvcresize.New(cachedGetter[*storagev1.StorageClass](d.store(storagev1.GroupName, "storageclasses")))))
	r.Register("RuntimeClass", constant(runtimeclass.New(cachedGetter[*nodev1.RuntimeClass](d.store(nodev1.GroupName, "runtimeclasses")))))
	r.Register("DefaultIngressClass", constant(defaultclass.NewIngress(metaLister(d.store(networkingv1.GroupName, "ingressclasses")))))
	r.Register("DenyServiceExternalIPs", constant(denyserviceexternalips.Plugin{}))
	r.Register("PodTopologyLabels", constant(podtopologylabels.New(cachedGetter[*corev1.Node](d.store("", "nodes")))))
	r.Register("PodResizeValidator", constant(podresize.New(cachedGetter[*corev1.Node](d.store("", "nodes")))))
	r.Register("NodeDeclaredFeatureValidator", func([]byte) (any, error) {
		return nodedeclaredfeatures.New(cachedGetter[*corev1.Node](d.store("", "nodes")), c.Generic.Version.GitVersion)
	})
	// kube's PodGroupProtection acts only on PodGroups, served only under
	// the GenericWorkload gate (beta, off by default; capstan refuses to
	// turn it on): by default it admits everything, so it adds nothing.
	r.Register("PodGroupProtection", constant(nil))
	r.Register("ResourceQuota", quotaPlugin(d.store("", "resourcequotas")))
	// The authorizer is the chain's, as kube gives its plugins.
	r.Register("CertificateApproval", constant(certificates.NewApproval(c.Generic.Authorization)))
	r.Register("CertificateSigning", constant(certificates.NewSigning(c.Generic.Authorization)))
	r.Register("ClusterTrustBundleAttest", constant(certificates.NewAttest(c.Generic.Authorization)))
	r.Register("CertificateSubjectRestriction", constant(certificates.SubjectRestriction{}))
	c.registerOptInPlugins(r, d)
	r.Register("MutatingAdmissionWebhook", c.webhookPlugin(d, true))
	r.Register("ValidatingAdmissionWebhook", c.webhookPlugin(d, false))
	r.Register("MutatingAdmissionPolicy", c.mutatingPolicyPlugin(d))
	r.Register("ValidatingAdmissionPolicy", c.validatingPolicyPlugin(d))
}

// metaLister lists the metadata of a cluster-scoped resource's objects from
// the watch cache as it is (RV "0"), as kube's plugins read an informer.
func metaLister(store *registry.Store) defaultclass.Lister {
	return func(ctx context.Context) ([]metav1.ObjectMeta, error) {
		obj, err := store.List(ctx, &rest.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return nil, err
		}
		items, err := meta.ExtractList(obj)
		if err != nil {
			return nil, err
		}
		metas := make([]metav1.ObjectMeta, 0, len(items))
		for _, item := range items {
			m, err := meta.Accessor(item)
			if err != nil {
				return nil, err
			}
			metas = append(metas, metav1.ObjectMeta{Name: m.GetName(), CreationTimestamp: m.GetCreationTimestamp(), Annotations: m.GetAnnotations()})
		}
		return metas, nil
	}
}

// cachedGetter reads a cluster-scoped object from the watch cache, then
// from etcd when the cache has not seen it yet, as kube's plugins read
// their informer then the API.
func cachedGetter[T runtime.Object](store *registry.Store) func(ctx context.Context, name string) (T, error) {
	return func(ctx context.Context, name string) (T, error) {
		obj, err := store.Get(ctx, name, &metav1.GetOptions{ResourceVersion: "0"})
		if err != nil {
			obj, err = store.Get(ctx, name, &metav1.GetOptions{})
		}
		if err != nil {
			var zero T
			return zero, err
		}
		return obj.(T), nil
	}
}

// namespaceCreator creates a namespace through the namespaces' store, as
// NamespaceAutoProvision's client creates it in kube.
func namespaceCreator(store *registry.Store) namespaceexists.Creator {
	return func(ctx context.Context, name string) error {
		_, err := store.Create(request.WithNamespace(ctx, ""), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, nil, &metav1.CreateOptions{})
		return err
	}
}
