package controlplane

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"

	"github.com/capstan-io/capstan/admission/policy/validating"
	"github.com/capstan-io/capstan/admission/serviceaccount"
	"github.com/capstan-io/capstan/apis/scheme"
	"github.com/capstan-io/capstan/controlplane/controllers/perns"
	"github.com/capstan-io/capstan/controlplane/controllers/satoken"
	"github.com/capstan-io/capstan/controlplane/controllers/storageprotection"
	"github.com/capstan-io/capstan/controlplane/controllers/vapstatus"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/request"
	"github.com/capstan-io/capstan/server"
)

// admissionLoop is a control loop kube runs in kube-controller-manager and
// that capstan runs in-process so that admission plugins work with nothing
// else running: a post-start hook, named by the controller's name.
type admissionLoop struct {
	name string // kube-controller-manager's name of the controller
	run  func(server.HookContext) error
}

// admissionLoops are the loops, by kube-controller-manager's names.
func (c Config) admissionLoops() []admissionLoop {
	return []admissionLoop{
		{ServiceAccountController, c.runLoop(func(client kubernetes.Interface) (runner, error) {
			return perns.NewServiceAccounts(client, c.Logger)
		})},
		{RootCACertPublisherController, c.runLoop(func(client kubernetes.Interface) (runner, error) {
			return perns.NewRootCA(client, c.RootCA, c.Logger)
		})},
		{ResourceQuotaController, c.runQuotaController},
		{PVCProtectionController, c.runLoop(func(client kubernetes.Interface) (runner, error) {
			return storageprotection.NewClaims(client, c.Logger)
		})},
		{ServiceAccountTokenController, c.runLoop(c.tokenController)},
		{PVProtectionController, c.runLoop(func(client kubernetes.Interface) (runner, error) {
			return storageprotection.NewVolumes(client, c.Logger)
		})},
		{VACProtectionController, c.runLoop(func(client kubernetes.Interface) (runner, error) {
			return storageprotection.NewClasses(client, c.Logger)
		})},
		{VAPStatusController, c.runLoop(func(client kubernetes.Interface) (runner, error) {
			// Schemas and kinds from the server's own discovery and
			// OpenAPI, custom resources included, as kube's loop reads them.
			mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(client.Discovery()))
			checker := &validating.TypeChecker{Schemas: &resolver.ClientDiscoveryResolver{Discovery: client.Discovery()}, Mapper: mapper,
				// Built-in kinds: their schemas change only with the binary.
				Static: scheme.Scheme.Recognizes}
			return vapstatus.New(client, checker, c.Logger)
		})},
	}
}

// installAdmissionLoops adds each loop --controllers leaves on as a
// post-start hook start-<name>, run on the elected replica.
func (c Config) installAdmissionLoops(s *server.Server) {
	for _, l := range c.admissionLoops() {
		if c.Disabled.Runs(l.name) {
			s.AddPostStartHook("start-"+l.name, c.elector.hook(l.name, l.run))
		}
	}
}

// runner is a loop started by runLoop.
type runner interface {
	Run(ctx context.Context, workers int)
}

// runLoop starts a loop over the loopback client.
func (c Config) runLoop(build func(kubernetes.Interface) (runner, error)) func(server.HookContext) error {
	return func(hc server.HookContext) error {
		client, err := kubernetes.NewForConfig(hc.LoopbackClientConfig)
		if err != nil {
			return err
		}
		ctrl, err := build(client)
		if err != nil {
			return fmt.Errorf("controller: %w", err)
		}
		go ctrl.Run(hc, 2)
		return nil
	}
}

// serviceAccountGetter reads accounts for the ServiceAccount plugin: from
// the watch cache (RV "0") as kube's plugin reads its informer, or from
// etcd.
func serviceAccountGetter(store *registry.Store) serviceaccount.Getter {
	return func(ctx context.Context, namespace, name string, cached bool) (*corev1.ServiceAccount, error) {
		opts := &metav1.GetOptions{}
		if cached {
			opts.ResourceVersion = "0"
		}
		obj, err := store.Get(request.WithNamespace(ctx, namespace), name, opts)
		if err != nil {
			return nil, err
		}
		return obj.(*corev1.ServiceAccount), nil
	}
}

// tokenController is the serviceaccount-token loop, signing with the
// service account key; without one (no --service-account-issuer) there
// are no tokens to fill and the loop does not start.
func (c Config) tokenController(client kubernetes.Interface) (runner, error) {
	if c.Authentication == nil || c.Authentication.legacySigner == nil {
		c.Logger.Info("not starting the serviceaccount-token controller: no service account signing key")
		return idle{}, nil
	}
	return satoken.New(satoken.Config{Client: client, Signer: c.Authentication.legacySigner, RootCA: c.RootCA, Logger: c.Logger})
}

// idle is a loop with nothing to do.
type idle struct{}

func (idle) Run(context.Context, int) {}
