// Package controlplane is the kube server of the chain: it installs the
// built-in API groups, the admission plugins that need them and the
// controllers a standalone API server must run itself.
//
// It builds the built-in groups' stores on a storagefactory.Factory and
// adds the NamespaceLifecycle, NodeRestriction, Priority and certificate
// admission plugins, the system namespaces, and the namespace controller,
// garbage collector, kubernetes Service, RBAC bootstrap and APF
// configuration as post-start hooks.
package controlplane

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/capstan-io/capstan/admission/namespacelifecycle"
	"github.com/capstan-io/capstan/apis/admissionregistration"
	"github.com/capstan-io/capstan/apis/policy"
	"github.com/capstan-io/capstan/apis/resource"
	"github.com/capstan-io/capstan/controlplane/controllers/garbagecollector"
	"github.com/capstan-io/capstan/controlplane/controllers/namespace"
	"github.com/capstan-io/capstan/internal/parallel"
	"github.com/capstan-io/capstan/kubeletclient"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/server"

	"github.com/capstan-io/capstan/storage/storagefactory"
)

// Config is the kube server's configuration.
type Config struct {
	Generic  server.CompletedConfig
	Storage  *storagefactory.Factory
	EventTTL time.Duration // --event-ttl
	Logger   *slog.Logger
	// systemNamespacesDone is closed once the system namespaces hook has
	// ended: hooks that write into those namespaces wait for it rather
	// than poll. Made by New.
	systemNamespacesDone chan struct{}
	// Services configures cluster IPs, node ports and the kubernetes Service.
	Services ServicesConfig
	// Authorization feeds the RBAC authorizer of the chain; nil without one.
	Authorization *Authorization
	// Authentication issues and reviews tokens; nil without tokens.
	Authentication *Authentication
	// LazyResources, if set, are the custom resources the garbage
	// collector watches only once they may hold objects, as it does the
	// built-in ones.
	LazyResources garbagecollector.LazyResources
	// Workloads is what pod specs and workloads may ask for.
	Workloads WorkloadPolicy
	// Kubelet reaches the kubelets of the node-facing subresources.
	Kubelet *kubeletclient.Client
	// Admission selects and configures the admission plugins.
	Admission AdmissionConfig
	// stores builds the built-in groups on Storage. Made by New.
	stores *storeBuilder
	// Disabled are the in-process control loops --controllers turns off.
	Disabled DisabledControllers
	// RootCA is the CA bundle pods verify the server with: the
	// kube-root-ca.crt config map of every namespace.
	RootCA []byte
	// HA is this replica's identity and the election of the loops.
	HA HAConfig
	// elector runs the loops kube leaves to kube-controller-manager on
	// the elected replica. Made by New.
	elector *electedLoops
}

// Instance is the kube server.
type Instance struct {
	Server *server.Server
}

// systemNamespaces are created at start, as kube's system namespaces
// controller does.
var systemNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease}

// New builds the kube server in front of delegate.
func (c Config) New(delegate *server.Server) (*Instance, error) {
	c.systemNamespacesDone = make(chan struct{})
	c.stores = &storeBuilder{Factory: c.Storage, apis: c.Generic.APIs}
	c.elector = &electedLoops{ha: c.HA, logger: c.Logger.With("controller", "leader-election")}
	s, err := c.Generic.New("kube-apiserver", delegate)
	if err != nil {
		return nil, err
	}
	// pods/eviction consults the PodDisruptionBudgets of policy/v1.
	policyGroup, err := c.stores.policyGroup()
	if err != nil {
		return nil, err
	}
	kubelets := c.kubelets()
	core, err := c.stores.coreGroup(c.EventTTL, policy.NewBudgets(policyGroup.stores["poddisruptionbudgets"]), c.Workloads.Pods, kubelets,
		c.Generic.Health.Checks)
	if err != nil {
		return nil, err
	}
	network, err := c.installServices(s, &core)
	if err != nil {
		return nil, err
	}
	if err := c.installServiceAccountTokens(s, &core); err != nil {
		return nil, err
	}
	groups := []builtGroup{core, network, policyGroup}
	for _, build := range []func() (builtGroup, error){
		func() (builtGroup, error) { return c.stores.eventsGroup(c.EventTTL) },
		c.stores.coordinationGroup,
		func() (builtGroup, error) { return c.stores.appsGroup(c.Workloads) },
		func() (builtGroup, error) { return c.stores.batchGroup(c.Workloads.Pods) },
		func() (builtGroup, error) { return c.authenticationGroup(), nil },
		c.stores.schedulingGroup,
		c.stores.nodeGroup,
		func() (builtGroup, error) { return c.stores.certificatesGroup(c.Generic.Authorization) },
		c.stores.autoscalingGroup,
		c.stores.discoveryGroup,
		c.stores.storageGroup,
		c.stores.flowcontrolGroup,
		func() (builtGroup, error) {
			return c.stores.admissionregistrationGroup(&admissionregistration.ParamAccess{
				Authorizer: c.Generic.Authorization, Resolve: discoveryResolver(s.Discovery())})
		},
		func() (builtGroup, error) {
			return c.stores.resourceGroup(resource.Access{Namespaces: resource.NamespaceGetter(namespaceGetter(core.stores["namespaces"])), Authorizer: c.Generic.Authorization})
		},
		c.stores.storageMigrationGroup,
	} {
		g, err := build()
		if err != nil {
			return nil, err
		}
		groups = append(groups, g)
	}
	c.addProxySubresources(groups, kubelets)
	for _, g := range groups {
		if err := s.InstallAPIGroup(g.group); err != nil {
			return nil, err
		}
	}
	if err := c.installAuthorization(s); err != nil {
		return nil, err
	}
	if err := c.installAdmission(s, groups); err != nil {
		return nil, err
	}
	c.installPriorityClasses(s)
	c.installAdmissionLoops(s)
	s.AddPostStartHook("start-watch-caches", func(hc server.HookContext) error {
		c.Storage.RunCaches(hc)
		return nil
	})
	s.AddPostStartHook("storage-object-count-tracker-hook", func(hc server.HookContext) error {
		// The first count reads every resource's keys: after the start,
		// not competing with it for the CPU. Until then lists are
		// estimated at their least width.
		hc.AfterHooks(func() { c.Storage.RunObjectCounts(hc) })
		return nil
	})
	s.AddPostStartHook("start-system-namespaces-controller", func(hc server.HookContext) error {
		defer close(c.systemNamespacesDone)
		return c.ensureSystemNamespaces(hc)
	})
	if c.Disabled.Runs(NamespaceController) {
		s.AddPostStartHook("start-namespace-controller", c.elector.hook(NamespaceController, c.runNamespaceController))
	}
	// --enable-garbage-collector=false: nothing collects, here or in a
	// kube-controller-manager beside capstan.
	if c.Disabled.Runs(GarbageCollectorController) && !c.Storage.Deletion.NoGarbageCollector {
		s.AddPostStartHook("start-garbage-collector", c.elector.hook(GarbageCollectorController, c.runGarbageCollector))
	}
	s.AddPostStartHook("start-cluster-authentication-info-controller", func(hc server.HookContext) error {
		// Its ConfigMap lives in kube-system.
		if err := waitFor(hc, c.systemNamespacesDone); err != nil {
			return err
		}
		return c.runAuthenticationTrust(hc)
	})
	s.AddPostStartHook("priority-and-fairness-config-producer", c.produceAPFConfiguration)
	if c.Disabled.Runs(StorageVersionMigratorController) {
		s.AddPostStartHook("start-"+StorageVersionMigratorController, c.elector.hook(StorageVersionMigratorController, c.runStorageVersionMigrator))
	}
	c.elector.install(s, c.systemNamespacesDone)
	c.installIdentity(s)
	return &Instance{Server: s}, nil
}

// namespaceGetter reads namespaces for admission from the watch cache (RV
// "0"), as kube's plugin reads its informer, so that a create costs no extra
// etcd read. A namespace the cache does not have yet, or has as other than
// Active, is read again from etcd. Like kube's informer, the cache may lag a
// deletion that began a moment ago; the namespace controller removes what is
// created in that moment.
func namespaceGetter(store *registry.Store) namespacelifecycle.NamespaceGetter {
	return func(ctx context.Context, name string) (*corev1.Namespace, error) {
		obj, err := store.Get(ctx, name, &metav1.GetOptions{ResourceVersion: "0"})
		if err == nil && obj.(*corev1.Namespace).Status.Phase == corev1.NamespaceActive {
			return obj.(*corev1.Namespace), nil
		}
		// kube's plugin reads through client-go here, which refuses a name
		// that cannot be a path segment before sending it.
		if msgs := path.IsValidPathSegmentName(name); len(msgs) != 0 {
			return nil, fmt.Errorf("invalid resource name %q: %v", name, msgs)
		}
		if obj, err = store.Get(ctx, name, &metav1.GetOptions{}); err != nil {
			return nil, err
		}
		return obj.(*corev1.Namespace), nil
	}
}

// ensureSystemNamespaces creates the system namespaces through the API, as
// any client would, retrying until they exist.
func (c Config) ensureSystemNamespaces(hc server.HookContext) error {
	client, err := kubernetes.NewForConfig(hc.LoopbackClientConfig)
	if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(hc, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		work := make([]func() error, len(systemNamespaces))
		for i, name := range systemNamespaces {
			work[i] = func() error {
				ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
				_, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
				if err != nil && !apierrors.IsAlreadyExists(err) {
					c.Logger.Debug("creating system namespace", "namespace", name, "err", err)
					return err
				}
				return nil
			}
		}
		return parallel.Do(0, work...) == nil, nil
	})
}

// runNamespaceController deletes the content of deleted namespaces, which
// kube leaves to kube-controller-manager; capstan runs it itself so that a
// namespace deletion completes with nothing else running.
func (c Config) runNamespaceController(hc server.HookContext) error {
	client, meta, disco, err := loopbackClients(hc.LoopbackClientConfig)
	if err != nil {
		return err
	}
	ctrl, err := namespace.New(namespace.Config{
		Client: client, Metadata: meta, Discovery: disco, Logger: c.Logger.With("controller", "namespace"),
		ResyncPeriod: namespace.DefaultResyncPeriod,
	})
	if err != nil {
		return fmt.Errorf("namespace controller: %w", err)
	}
	// kube runs the namespace controller in its controller manager, which
	// starts after the API server: it waits for the start to finish here
	// too.
	hc.AfterHooks(func() { ctrl.Run(hc, 5) })
	return nil
}

// runGarbageCollector deletes objects whose owners are gone and carries out
// foreground and orphan deletions, which kube leaves to
// kube-controller-manager; capstan runs it itself so that ownerReferences
// work with nothing else running.
func (c Config) runGarbageCollector(hc server.HookContext) error {
	_, meta, disco, err := loopbackClients(hc.LoopbackClientConfig)
	if err != nil {
		return err
	}
	lazy := lazyUnion{&c.stores.builtins}
	if c.LazyResources != nil {
		lazy = append(lazy, c.LazyResources)
	}
	ctrl, err := garbagecollector.New(garbagecollector.Config{
		Metadata: meta, Discovery: disco, Logger: c.Logger, Lazy: lazy,
	})
	if err != nil {
		return fmt.Errorf("garbage collector: %w", err)
	}
	// kube runs the collector in its controller manager, which starts
	// after the API server: its informers over every resource wait
	// for the start to finish here too.
	hc.AfterHooks(func() { ctrl.Run(hc, 5) })
	return nil
}

// loopbackClients are the typed, metadata and discovery clients the
// in-process controllers that walk every resource (namespace, garbage
// collector, resource quota) are built on.
func loopbackClients(cfg *rest.Config) (kubernetes.Interface, metadata.Interface, discovery.DiscoveryInterface, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	return client, meta, disco, nil
}
