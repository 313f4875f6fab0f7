package apiextensions

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/capstan-io/capstan/apiextensions/controllers"
	crdapi "github.com/capstan-io/capstan/apis/apiextensions"
	"github.com/capstan-io/capstan/endpoints/handlers"
	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/request"
	"github.com/capstan-io/capstan/server"
	capstorage "github.com/capstan-io/capstan/storage"
	"github.com/capstan-io/capstan/storage/storagefactory"
	"github.com/capstan-io/capstan/warning"
)

// crdHandler serves the custom resources of the established CRDs. It
// follows the CRDs with an in-process informer over their store; a CRD's
// endpoints (schemas, validators, storage) are built on its first request
// and dropped when the CRD changes, so an idle CRD costs little more than
// its discovery entry.
type crdHandler struct {
	server   *server.Server
	storage  *storagefactory.Factory
	logger   *slog.Logger
	informer cache.SharedIndexInformer
	meta     *metaDefinitions
	openapi  *crdOpenAPI
	custom   *customResources

	// mu guards the maps. Lock order: a crdEntry's mu, then this one
	// (a build reads the maps with its entry locked); never the reverse.
	mu sync.RWMutex
	// resources holds the served versions of established CRDs by the
	// group, version and accepted plural name.
	resources map[schema.GroupVersionResource]*crdEntry
	entries   map[string]*crdEntry // by CRD name
	// groups holds the entries by group and CRD name: discovery is
	// rebuilt one group at a time.
	groups map[string]map[string]*crdEntry
	// establishing holds, by name, the CRDs the naming controller is
	// making Established in the write that accepts their names: served
	// from before that write (serveEstablishing) until the informer
	// brings them Established, the older states it brings until then
	// being ignored.
	establishing map[string]*apiextv1.CustomResourceDefinition
}

// crdEntry is one CRD as served, with its endpoints once built: read-only
// ones on a first get, list or watch, the full ones on the first request
// of another verb.
type crdEntry struct {
	crd *apiextv1.CustomResourceDefinition
	// built is full once built: what every request then takes, unlocked.
	built atomic.Pointer[serving]

	// mu guards the fields below and serializes builds. It is taken
	// before crdHandler.mu, never while holding it.
	mu           sync.Mutex
	read, full   *serving
	readErr, err error
	// dropped: the CRD changed or went; endpoints still built for the
	// requests that found the entry before get no watch caches.
	dropped bool
}

// drop stops the watch caches of the entry's storage: their watches end,
// and their clients watch again on the endpoints of the CRD as it is now.
func (e *crdEntry) drop() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.dropped = true
	for _, s := range []*serving{e.read, e.full} {
		if s != nil {
			s.storages.stop()
		}
	}
}

// readVerbs are the verbs read-only endpoints serve.
var readVerbs = map[string]bool{"get": true, "list": true, "watch": true}

// servingFor returns the endpoints of a request of verb, built by the
// first request that needs them. The full endpoints, once built, serve
// every verb. A build that failed fails every request that needs it, as
// the endpoints depend only on what servingChanged compares: any snapshot
// of the entry's CRD builds the same ones.
func (h *crdHandler) servingFor(e *crdEntry, crd *apiextv1.CustomResourceDefinition, verb string) (*serving, error) {
	if s := e.built.Load(); s != nil {
		return s, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.full != nil || e.err != nil {
		return e.full, e.err
	}
	current := func() *apiextv1.CustomResourceDefinition {
		h.mu.RLock()
		defer h.mu.RUnlock()
		return e.crd
	}
	if readVerbs[verb] {
		if e.read == nil && e.readErr == nil {
			e.read, e.readErr = h.buildServing(crd, true, nil, current, !e.dropped)
		}
		return e.read, e.readErr
	}
	// Watches being served keep the read-only endpoints they started on
	// until they end; their storage goes on in the full ones.
	h.custom.becomingWritable(crd)
	e.full, e.err = h.buildServing(crd, false, e.read, current, !e.dropped)
	if e.full != nil {
		e.read = nil
		e.built.Store(e.full)
	}
	return e.full, e.err
}

func newCRDHandler(s *server.Server, storage *storagefactory.Factory, crds *registry.Store, logger *slog.Logger) *crdHandler {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return crds.List(ctx, &rest.ListOptions{ResourceVersion: opts.ResourceVersion, ResourceVersionMatch: opts.ResourceVersionMatch,
				Limit: opts.Limit, Continue: opts.Continue, Objects: capstorage.CachedObjects})
		},
		// The informer's users (this handler, the CRD controllers, which
		// change copies) only read the CRDs of its lists and events, so it
		// takes the watch cache's own: a CRD is held once, not twice.
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return crds.Watch(ctx, &rest.ListOptions{ResourceVersion: opts.ResourceVersion, ResourceVersionMatch: opts.ResourceVersionMatch,
				AllowWatchBookmarks: opts.AllowWatchBookmarks, SendInitialEvents: opts.SendInitialEvents, TimeoutSeconds: opts.TimeoutSeconds,
				Objects: capstorage.CachedObjects})
		},
	}
	h := &crdHandler{
		server: s, storage: storage, logger: logger,
		meta: &metaDefinitions{types: s.Installer().TypeConverter, catalog: s.OpenAPICatalog()},
		// The CRD controllers share this informer (and its resyncs).
		informer: cache.NewSharedIndexInformer(lw, &apiextv1.CustomResourceDefinition{}, controllers.DefaultResyncPeriod,
			cache.Indexers{controllers.GroupIndex: controllers.IndexByGroup}),
		resources: map[schema.GroupVersionResource]*crdEntry{}, entries: map[string]*crdEntry{},
		groups:       map[string]map[string]*crdEntry{},
		establishing: map[string]*apiextv1.CustomResourceDefinition{},
	}
	h.openapi = newCRDOpenAPI(s.OpenAPICatalog(), h.served)
	h.custom = &customResources{h: h}
	_, _ = h.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { h.sync(obj.(*apiextv1.CustomResourceDefinition)) },
		UpdateFunc: func(_, obj any) { h.sync(obj.(*apiextv1.CustomResourceDefinition)) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if crd, ok := obj.(*apiextv1.CustomResourceDefinition); ok {
				h.mu.Lock()
				delete(h.establishing, crd.Name)
				h.mu.Unlock()
				h.remove(crd)
			}
		},
	})
	return h
}

func (h *crdHandler) run(ctx context.Context) { h.informer.RunWithContext(ctx) }

// served returns the CRD of that name as served now, nil if it is not.
func (h *crdHandler) served(name string) *apiextv1.CustomResourceDefinition {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if e := h.entries[name]; e != nil {
		return e.crd
	}
	return nil
}

// waitForSync returns once the informer has listed the CRDs, so that a
// ready server serves every established CRD.
func (h *crdHandler) waitForSync(ctx context.Context) error {
	if !cache.WaitForCacheSync(ctx.Done(), h.informer.HasSynced) {
		return fmt.Errorf("CRD informer did not sync")
	}
	return nil
}

// sync serves crd as the informer brings it, but for the older states of
// a CRD being established (see establishing).
func (h *crdHandler) sync(crd *apiextv1.CustomResourceDefinition) {
	h.mu.Lock()
	if pending := h.establishing[crd.Name]; pending != nil {
		if pending.UID == crd.UID && !crdapi.IsEstablished(crd) {
			h.mu.Unlock()
			return
		}
		delete(h.establishing, crd.Name)
	}
	h.mu.Unlock()
	h.serve(crd)
}

// serveEstablishing serves crd, which the naming controller is about to
// write Established, before the write: a client that sees it Established
// finds its resource served, however late this server's informer brings
// the write. If the write fails, the informer's state of the CRD is
// served again.
func (h *crdHandler) serveEstablishing(crd *apiextv1.CustomResourceDefinition) (done func(written bool)) {
	h.mu.Lock()
	h.establishing[crd.Name] = crd
	h.mu.Unlock()
	h.serve(crd)
	return func(written bool) {
		if written {
			return
		}
		h.mu.Lock()
		if h.establishing[crd.Name] == crd {
			delete(h.establishing, crd.Name)
		}
		h.mu.Unlock()
		if current, exists, _ := h.informer.GetIndexer().GetByKey(crd.Name); exists {
			h.sync(current.(*apiextv1.CustomResourceDefinition))
		} else {
			h.remove(crd)
		}
	}
}

// serve serves crd as it is now: its served versions while it is
// established, nothing otherwise.
func (h *crdHandler) serve(crd *apiextv1.CustomResourceDefinition) {
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
	dropped := h.dropLocked(crd.Name)
	e := &crdEntry{crd: crd}
	h.entries[crd.Name] = e
	if h.groups[crd.Spec.Group] == nil {
		h.groups[crd.Spec.Group] = map[string]*crdEntry{}
	}
	h.groups[crd.Spec.Group][crd.Name] = e
	for _, v := range crd.Spec.Versions {
		if v.Served {
			h.resources[schema.GroupVersionResource{Group: crd.Spec.Group, Version: v.Name, Resource: crd.Status.AcceptedNames.Plural}] = e
		}
	}
	h.mu.Unlock()
	reason := "add"
	if dropped != nil {
		dropped.drop()
		reason = "update"
	}
	h.openapi.update(crd)
	metrics.CRDOpenAPI(crd.Name, reason, crd.Spec.Group, servedVersions(crd))
	h.updateDiscovery(crd.Spec.Group)
}

// servedVersions are the names of crd's served versions.
func servedVersions(crd *apiextv1.CustomResourceDefinition) []string {
	var vs []string
	for _, v := range crd.Spec.Versions {
		if v.Served {
			vs = append(vs, v.Name)
		}
	}
	return vs
}

func (h *crdHandler) remove(crd *apiextv1.CustomResourceDefinition) {
	h.mu.Lock()
	dropped := h.dropLocked(crd.Name)
	h.mu.Unlock()
	if dropped != nil {
		dropped.drop()
		h.updateDiscovery(crd.Spec.Group)
		h.openapi.remove(crd)
		metrics.CRDOpenAPI(crd.Name, "remove", crd.Spec.Group, servedVersions(dropped.crd))
	}
}

// dropLocked stops serving the CRD of that name and returns its entry,
// which the caller drops once it has unlocked h.mu.
func (h *crdHandler) dropLocked(name string) *crdEntry {
	e := h.entries[name]
	if e == nil {
		return nil
	}
	delete(h.entries, name)
	if g := h.groups[e.crd.Spec.Group]; g != nil {
		delete(g, name)
		if len(g) == 0 {
			delete(h.groups, e.crd.Spec.Group)
		}
	}
	for gvr, other := range h.resources {
		if other == e {
			delete(h.resources, gvr)
		}
	}
	return e
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

// Serves reports whether the request is the CRD server's to answer: a
// custom resource of an established CRD, or any other resource request of
// a group some CRD has, which kube's CRD handler answers with its plain
// 404 (kube does so for every group no built-in server serves; capstan's
// last delegate answers the groups no CRD has).
func (h *crdHandler) Serves(info *request.Info) bool {
	if e, _ := h.entry(info); e != nil {
		return true
	}
	return h.claims(info)
}

// claims reports whether a resource request that no served CRD takes is
// of a group some CRD has.
func (h *crdHandler) claims(info *request.Info) bool {
	if !info.IsResourceRequest || info.APIPrefix != "apis" || info.APIGroup == "" {
		return false
	}
	crds, err := h.informer.GetIndexer().ByIndex(controllers.GroupIndex, info.APIGroup)
	return err == nil && len(crds) > 0
}

// possiblyAcrossAllNamespacesVerbs are the verbs a namespaced custom
// resource takes at its cluster path.
var possiblyAcrossAllNamespacesVerbs = map[string]bool{"list": true, "watch": true}

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
		// kube's CRD handler passes what it does not serve to its
		// delegate, whose answer is Go's plain 404.
		http.NotFound(w, r)
		return
	}
	// A request whose path has a namespace, or has none, against the
	// scope of the CRD is not served either (but for lists and watches of
	// a namespaced resource in every namespace).
	namespacedCRD, namespacedReq := crd.Spec.Scope == apiextv1.NamespaceScoped, info.Namespace != ""
	if namespacedCRD != namespacedReq && (!namespacedCRD || !possiblyAcrossAllNamespacesVerbs[info.Verb]) {
		http.NotFound(w, r)
		return
	}
	defer metrics.Routed(r, info)()
	if info.Verb == "create" && crdapi.IsTerminating(crd) {
		err := apierrors.NewMethodNotSupported(schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}, info.Verb)
		err.ErrStatus.Message = info.Verb + " not allowed while custom resource definition is terminating"
		handlers.WriteStatus(w, r, ns, handlers.ErrorToStatus(err, nil))
		return
	}
	served, err := h.servingFor(e, crd, info.Verb)
	if err != nil {
		h.logger.Error("serving custom resources", "crd", crd.Name, "err", err)
		handlers.WriteStatus(w, r, ns, handlers.ErrorToStatus(apierrors.NewInternalError(err), nil))
		return
	}
	v := crdapi.GetVersion(crd, info.APIVersion)
	if v != nil && v.Deprecated {
		warning.Add(r.Context(), deprecationWarning(crd, v))
	}
	if info.Subresource != "" && !servesSubresource(v, info.Subresource) {
		handlers.WriteStatus(w, r, ns, handlers.ErrorToStatus(apierrors.NewNotFound(schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}, info.Name), nil))
		return
	}
	if info.Verb == "patch" && !crPatchType(r) {
		handlers.WriteStatus(w, r, ns, unsupportedPatchType())
		return
	}
	if info.Subresource == "" && (info.Verb == "list" || info.Verb == "watch" || info.Verb == "deletecollection") {
		if err := served.checkFieldSelector(r, info.APIVersion); err != nil {
			handlers.WriteStatus(w, r, ns, handlers.ErrorToStatus(err, nil))
			return
		}
	}
	served.router.ServeHTTP(w, r)
}

// servesSubresource says whether version v of a CRD has the subresource.
func servesSubresource(v *apiextv1.CustomResourceDefinitionVersion, sub string) bool {
	if v == nil || v.Subresources == nil {
		return false
	}
	switch sub {
	case "status":
		return v.Subresources.Status != nil
	case "scale":
		return v.Subresources.Scale != nil
	}
	return false
}

// crPatchType says whether a patch request's Content-Type is one custom
// resources take. As kube, only the media type, before any parameter,
// counts.
func crPatchType(r *http.Request) bool {
	mt := r.Header.Get("Content-Type")
	if i := strings.Index(mt, ";"); i > 0 {
		mt = mt[:i]
	}
	for _, pt := range crPatchTypes {
		if mt == string(pt) {
			return true
		}
	}
	return false
}

// unsupportedPatchType is kube's 415 for a patch of a custom resource in
// another media type, strategic merge patch among them: it lists the patch
// types served, and has no details.
func unsupportedPatchType() *metav1.Status {
	names := make([]string, len(crPatchTypes))
	for i, pt := range crPatchTypes {
		names[i] = string(pt)
	}
	return &metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
		Message: "the body of the request was in an unknown format - accepted media types include: " + strings.Join(names, ", "),
	}
}

// deprecationWarning is the warning every request to a deprecated version
// carries: the CRD's own, or kube's default, which points to the highest
// served version that is not deprecated and sorts after this one.
func deprecationWarning(crd *apiextv1.CustomResourceDefinition, v *apiextv1.CustomResourceDefinitionVersion) string {
	if v.DeprecationWarning != nil {
		return *v.DeprecationWarning
	}
	msg := fmt.Sprintf("%s/%s %s is deprecated", crd.Spec.Group, v.Name, crd.Spec.Names.Kind)
	newest := ""
	for _, other := range crd.Spec.Versions {
		if other.Served && !other.Deprecated && version.CompareKubeAwareVersionStrings(v.Name, other.Name) < 0 &&
			(newest == "" || version.CompareKubeAwareVersionStrings(other.Name, newest) > 0) {
			newest = other.Name
		}
	}
	if newest != "" {
		msg += fmt.Sprintf("; use %s/%s %s", crd.Spec.Group, newest, crd.Spec.Names.Kind)
	}
	return msg
}
