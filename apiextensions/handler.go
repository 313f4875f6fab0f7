package apiextensions

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	crdapi "github.com/capstan-io/capstan/apis/apiextensions"
	apiextv1 "github.com/capstan-io/capstan/apis/apiextensions/v1"
	"github.com/capstan-io/capstan/controlplane"
	"github.com/capstan-io/capstan/endpoints/handlers"
	"github.com/capstan-io/capstan/endpoints/request"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/server"
)

// crdHandler serves the custom resources of the established CRDs. It
// follows the CRDs with an in-process informer over their store; a CRD's
// endpoints (schemas, validators, storage) are built on its first request
// and dropped when the CRD changes, so an idle CRD costs little more than
// its discovery entry.
type crdHandler struct {
	server   *server.Server
	storage  *controlplane.StorageFactory
	logger   *slog.Logger
	informer cache.SharedIndexInformer
	meta     *metaDefinitions
	openapi  *crdOpenAPI

	mu sync.RWMutex // guards the maps
	// resources holds the served versions of established CRDs by the
	// group, version and accepted plural name.
	resources map[schema.GroupVersionResource]*crdEntry
	entries   map[string]*crdEntry // by CRD name
}

// crdEntry is one CRD as served, with its endpoints once built.
type crdEntry struct {
	crd     *apiextv1.CustomResourceDefinition
	once    sync.Once
	serving *serving
	err     error
}

func newCRDHandler(s *server.Server, storage *controlplane.StorageFactory, crds *registry.Store, logger *slog.Logger) *crdHandler {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return crds.List(ctx, &rest.ListOptions{ResourceVersion: opts.ResourceVersion, ResourceVersionMatch: opts.ResourceVersionMatch,
				Limit: opts.Limit, Continue: opts.Continue})
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return crds.Watch(ctx, &rest.ListOptions{ResourceVersion: opts.ResourceVersion, ResourceVersionMatch: opts.ResourceVersionMatch,
				AllowWatchBookmarks: opts.AllowWatchBookmarks, SendInitialEvents: opts.SendInitialEvents, TimeoutSeconds: opts.TimeoutSeconds})
		},
	}
	h := &crdHandler{
		server: s, storage: storage, logger: logger,
		meta:      &metaDefinitions{catalog: s.OpenAPICatalog()},
		openapi:   newCRDOpenAPI(s.OpenAPICatalog()),
		informer:  cache.NewSharedIndexInformer(lw, &apiextv1.CustomResourceDefinition{}, 0, cache.Indexers{}),
		resources: map[schema.GroupVersionResource]*crdEntry{}, entries: map[string]*crdEntry{},
	}
	_, _ = h.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { h.sync(obj.(*apiextv1.CustomResourceDefinition)) },
		UpdateFunc: func(_, obj any) { h.sync(obj.(*apiextv1.CustomResourceDefinition)) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if crd, ok := obj.(*apiextv1.CustomResourceDefinition); ok {
				h.remove(crd)
			}
		},
	})
	return h
}

func (h *crdHandler) run(ctx context.Context) { h.informer.RunWithContext(ctx) }

// waitForSync returns once the informer has listed the CRDs, so that a
// ready server serves every established CRD.
func (h *crdHandler) waitForSync(ctx context.Context) error {
	if !cache.WaitForCacheSync(ctx.Done(), h.informer.HasSynced) {
		return fmt.Errorf("CRD informer did not sync")
	}
	return nil
}

// sync serves crd as it is now: its served versions while it is
// established, nothing otherwise.
func (h *crdHandler) sync(crd *apiextv1.CustomResourceDefinition) {
	if !crdapi.IsEstablished(crd) {
		h.remove(crd)
		return
	}
	h.mu.Lock()
	old := h.entries[crd.Name]
	if old != nil && !servingChanged(old.crd, crd) {
		// Status-only changes keep the built endpoints.
		old.crd = crd
		h.mu.Unlock()
		return
	}
	h.dropLocked(crd.Name)
	e := &crdEntry{crd: crd}
	h.entries[crd.Name] = e
	for _, v := range crd.Spec.Versions {
		if v.Served {
			h.resources[schema.GroupVersionResource{Group: crd.Spec.Group, Version: v.Name, Resource: crd.Status.AcceptedNames.Plural}] = e
		}
	}
	h.mu.Unlock()
	h.openapi.update(crd)
	h.updateDiscovery(crd.Spec.Group)
}

func (h *crdHandler) remove(crd *apiextv1.CustomResourceDefinition) {
	h.mu.Lock()
	dropped := h.dropLocked(crd.Name)
	h.mu.Unlock()
	if dropped {
		h.updateDiscovery(crd.Spec.Group)
		h.openapi.remove(crd)
	}
}

func (h *crdHandler) dropLocked(name string) bool {
	e := h.entries[name]
	if e == nil {
		return false
	}
	delete(h.entries, name)
	for gvr, other := range h.resources {
		if other == e {
			delete(h.resources, gvr)
		}
	}
	return true
}

// servingChanged tells whether the endpoints of a CRD must be rebuilt.
func servingChanged(old, crd *apiextv1.CustomResourceDefinition) bool {
	return old.UID != crd.UID || old.Generation != crd.Generation ||
		!equalNames(old.Status.AcceptedNames, crd.Status.AcceptedNames)
}

func equalNames(a, b apiextv1.CustomResourceDefinitionNames) bool {
	return a.Plural == b.Plural && a.Singular == b.Singular && a.Kind == b.Kind && a.ListKind == b.ListKind &&
		fmt.Sprint(a.ShortNames) == fmt.Sprint(b.ShortNames) && fmt.Sprint(a.Categories) == fmt.Sprint(b.Categories)
}

// Serves reports whether the request is for a custom resource of an
// established CRD.
func (h *crdHandler) Serves(info *request.Info) bool {
	e, _ := h.entry(info)
	return e != nil
}

// entry returns the entry serving the request and its CRD as it is now
// (sync replaces an entry's CRD on status changes).
func (h *crdHandler) entry(info *request.Info) (*crdEntry, *apiextv1.CustomResourceDefinition) {
	if !info.IsResourceRequest {
		return nil, nil
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	e := h.resources[schema.GroupVersionResource{Group: info.APIGroup, Version: info.APIVersion, Resource: info.Resource}]
	if e == nil {
		return nil, nil
	}
	return e, e.crd
}

// ServeHTTP serves a custom resource request through the CRD's endpoints.
func (h *crdHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	info, _ := request.InfoFrom(r.Context())
	e, crd := h.entry(info)
	ns := h.server.Installer().Serializer
	if e == nil {
		handlers.WriteStatus(w, r, ns, handlers.ErrorToStatus(apierrors.NewNotFound(schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}, info.Name), nil))
		return
	}
	if info.Verb == "create" && crdapi.IsTerminating(crd) {
		err := apierrors.NewMethodNotSupported(schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}, info.Verb)
		err.ErrStatus.Message = info.Verb + " not allowed while custom resource definition is terminating"
		handlers.WriteStatus(w, r, ns, handlers.ErrorToStatus(err, nil))
		return
	}
	// The endpoints depend only on what servingChanged compares, so any
	// snapshot of the entry's CRD builds the same ones.
	e.once.Do(func() { e.serving, e.err = h.buildServing(crd) })
	if e.err != nil {
		h.logger.Error("serving custom resources", "crd", crd.Name, "err", e.err)
		handlers.WriteStatus(w, r, ns, handlers.ErrorToStatus(apierrors.NewInternalError(e.err), nil))
		return
	}
	if v := crdapi.GetVersion(crd, info.APIVersion); v != nil && v.Deprecated {
		handlers.AddWarning(w, deprecationWarning(crd, v))
	}
	e.serving.router.ServeHTTP(w, r)
}

// deprecationWarning is the warning every request to a deprecated version
// carries: the CRD's own, or kube's default.
func deprecationWarning(crd *apiextv1.CustomResourceDefinition, v *apiextv1.CustomResourceDefinitionVersion) string {
	if v.DeprecationWarning != nil {
		return *v.DeprecationWarning
	}
	return fmt.Sprintf("%s/%s %s is deprecated", crd.Spec.Group, v.Name, crd.Spec.Names.Kind)
}
