// Package apiextensions is the CRD server: the innermost server of the
// chain. It serves apiextensions.k8s.io/v1 CustomResourceDefinitions and,
// for every established CRD, the custom resources it defines, installed and
// removed while the server runs.
//
// Custom resource requests are routed dynamically (handler.go); a CRD's
// stores are built lazily on its first request (serving.go), stored as JSON
// at the storage version (codec.go) behind a watch cache per served version
// (none for versions a webhook converts), which runs until the CRD changes
// or goes. Established CRDs are listed in discovery and OpenAPI, whose
// models are made only when a document needs them.
package apiextensions

import (
	"log/slog"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/apiextensions/controllers"
	crdapi "github.com/capstan-io/capstan/apis/apiextensions"
	"github.com/capstan-io/capstan/controlplane/controllers/garbagecollector"
	"github.com/capstan-io/capstan/endpoints"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/server"
	"github.com/capstan-io/capstan/storage/storagefactory"
)

// priorityAPIExtensions orders apiextensions.k8s.io in /apis, as kube does.
const priorityAPIExtensions = 16700

// Config is the CRD server's configuration.
type Config struct {
	Generic server.CompletedConfig
	// Storage makes the storage of CRDs and of custom resources.
	Storage *storagefactory.Factory
	Logger  *slog.Logger
}

// Server is the CRD server.
type Server struct {
	Server *server.Server
	// CustomResources tells the garbage collector of the kube server which
	// resources are custom and when one may get objects.
	CustomResources garbagecollector.LazyResources
}

// New builds the CRD server in front of delegate.
func (c Config) New(delegate *server.Server) (*Server, error) {
	s, err := c.Generic.New("apiextensions-apiserver", delegate)
	if err != nil {
		return nil, err
	}
	logger := c.Logger
	if logger == nil {
		logger = slog.Default()
	}
	crds, err := c.crdStore()
	if err != nil {
		return nil, err
	}
	group := endpoints.APIGroup{Name: apiextv1.GroupName, Priority: priorityAPIExtensions, Versions: []endpoints.GroupVersion{{
		Version: "v1",
		Resources: []endpoints.Resource{
			{Name: "customresourcedefinitions", Kind: "CustomResourceDefinition", Storage: crds,
				ShortNames: []string{"crd", "crds"}, Categories: []string{"api-extensions"}, StorageVersion: &crdStorageGV,
				Defaulter: crdapi.CRDStrategy{}.Default, ResetFields: []string{"status"}, SupportedFields: crds.SupportedFields()},
			{Name: "customresourcedefinitions/status", Kind: "CustomResourceDefinition", Storage: crds.Subresource(crdapi.CRDStatusStrategy{}),
				Defaulter: crdapi.CRDStrategy{}.Default, ResetFields: []string{"spec"}, SupportedFields: crds.SupportedFields()},
		},
	}}}
	if err := s.InstallAPIGroup(group); err != nil {
		return nil, err
	}
	h := newCRDHandler(s, c.Storage, crds, logger.With("component", "crd-handler"))
	s.SetResourceHandler(h)
	s.AddPostStartHook("start-apiextensions-informers", func(hc server.HookContext) error {
		go h.run(hc)
		return nil
	})
	s.AddPostStartHook("start-apiextensions-controllers", func(hc server.HookContext) error {
		return controllers.Start(hc, controllers.Config{Loopback: hc.LoopbackClientConfig, Instances: h.custom,
			Logger: logger.With("component", "crd-controllers"), Informer: h.informer, Serve: h.serveEstablishing})
	})
	s.AddPostStartHook("crd-informer-synced", func(hc server.HookContext) error {
		return h.waitForSync(hc)
	})
	return &Server{Server: s, CustomResources: h.custom}, nil
}

// crdStore is the REST storage of customresourcedefinitions. CRDs are
// stored as kube-apiserver stores them (crdCodec: JSON at v1beta1), so that
// either server reads what the other wrote; values earlier capstans wrote
// (v1, as JSON or protobuf) are read too and rewritten by their next write.
func (c Config) crdStore() (*registry.Store, error) {
	gr := apiextv1.Resource("customresourcedefinitions")
	newFunc := func() runtime.Object { return &apiextv1.CustomResourceDefinition{} }
	newList := func() runtime.Object { return &apiextv1.CustomResourceDefinitionList{} }
	st, err := c.Storage.New(storagefactory.Spec{
		Resource: gr, KeyPrefix: "/" + gr.Group + "/" + gr.Resource,
		StorageVersion: apiextv1.SchemeGroupVersion, New: newFunc, NewList: newList, Codec: newCRDCodec(),
		Defaults: crdStrategy{}.Default,
	})
	if err != nil {
		return nil, err
	}
	return registry.NewStore(registry.StoreConfig{
		Resource: gr, Kind: "CustomResourceDefinition", New: newFunc, NewList: newList,
		KeyPrefix: "/" + gr.Group + "/" + gr.Resource, Strategy: crdStrategy{}, Storage: st,
		Deletion: registry.Deletion(c.Storage.Deletion),
	}), nil
}

// crdStrategy is the CRD strategy with kube's deletion: a CRD is not
// deleted at once but marked and held by the cleanup finalizer until the
// finalizer controller has deleted its custom resources.
type crdStrategy struct{ crdapi.CRDStrategy }

// HoldForDeletion adds the cleanup finalizer.
func (crdStrategy) HoldForDeletion(obj runtime.Object) bool {
	crd := obj.(*apiextv1.CustomResourceDefinition)
	for _, f := range crd.Finalizers {
		if f == apiextv1.CustomResourceCleanupFinalizer {
			return true
		}
	}
	crd.Finalizers = append(crd.Finalizers, apiextv1.CustomResourceCleanupFinalizer)
	return true
}
