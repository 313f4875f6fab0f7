package apiextensions

import (
	"fmt"
	"net/http"
	"sync"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metainternalversionvalidation "k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/capstan-io/capstan/apiextensions/cel"
	"github.com/capstan-io/capstan/apiextensions/conversion"
	"github.com/capstan-io/capstan/apiextensions/customresource"
	crschema "github.com/capstan-io/capstan/apiextensions/schema"
	crdapi "github.com/capstan-io/capstan/apis/apiextensions"
	"github.com/capstan-io/capstan/endpoints"
	"github.com/capstan-io/capstan/endpoints/handlers"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/storage"
	"github.com/capstan-io/capstan/storage/storagefactory"
)

// serving is the endpoints of one CRD: a router over the scopes of each
// served version and its subresources.
type serving struct {
	router *endpoints.Router
	// readOnly endpoints serve get, list and watch only: they have no
	// validation and no field managers, the larger part of a CRD's
	// endpoints, which informers of every resource (the garbage
	// collector's) would otherwise have built for every CRD. The full
	// endpoints take over their storage.
	readOnly bool
	// What the full endpoints take over from read-only ones.
	converter conversion.Converter
	schemas   map[string]*lazySchema // by served version
	storages  *versionStorages
	// fieldLabels accepts the field selector keys of each version, as
	// kube's converter of custom resources does.
	fieldLabels runtime.ObjectConvertor
	kinds       map[string]schema.GroupVersionKind // by served version
}

// checkFieldSelector refuses a field selector with a key the version's
// resources cannot be selected by, with kube's 400 for custom resources
// ("field label not supported: <key>"). kube checks the keys once the list
// options have decoded and validated: options that do not are the list
// handler's to refuse, first.
func (s *serving) checkFieldSelector(r *http.Request, version string) error {
	query := r.URL.Query()
	if query.Get("fieldSelector") == "" {
		return nil
	}
	var opts metainternalversion.ListOptions
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(query, metav1.SchemeGroupVersion, &opts); err != nil || opts.FieldSelector == nil {
		return nil
	}
	// As kube: validated as a watch for ?watch=true only, not for the
	// legacy /watch/ paths.
	if errs := metainternalversionvalidation.ValidateListOptions(&opts, true); len(errs) > 0 {
		return nil
	}
	for _, req := range opts.FieldSelector.Requirements() {
		if _, _, err := s.fieldLabels.ConvertFieldLabel(s.kinds[version], req.Field, req.Value); err != nil {
			return apierrors.NewBadRequest(err.Error())
		}
	}
	return nil
}

// buildServing builds the endpoints of every served version of crd: the
// read-only ones, or the full ones, which take over the storage of the
// read-only ones base if they were built. current returns the entry's CRD
// as it is now (the same spec as crd). With cached, the storage it makes
// has watch caches where they can be.
func (h *crdHandler) buildServing(crd *apiextv1.CustomResourceDefinition, readOnly bool, base *serving,
	current func() *apiextv1.CustomResourceDefinition, cached bool) (*serving, error) {
	storageVersion, err := crdapi.StorageVersion(crd)
	if err != nil {
		return nil, err
	}
	out := &serving{readOnly: readOnly}
	if base != nil {
		out.converter, out.schemas, out.storages = base.converter, base.schemas, base.storages
	} else {
		out.storages = &versionStorages{byVersion: map[string]storage.Interface{}}
		if out.converter, err = conversion.New(crd, conversion.Options{}); err != nil {
			return nil, err
		}
		out.schemas = map[string]*lazySchema{}
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			// Checked now in any case; kept by read-only endpoints only
			// once they read an object.
			s, err := versionSchema(v)
			if err != nil {
				return nil, fmt.Errorf("version %s: %w", v.Name, err)
			}
			if readOnly {
				out.schemas[v.Name] = &lazySchema{crd: current, version: v.Name}
			} else {
				out.schemas[v.Name] = loadedSchema(s)
			}
		}
	}
	converter := out.converter
	var types managedfields.TypeConverter
	if !readOnly {
		structurals := map[string]*crschema.Structural{}
		for version, s := range out.schemas {
			structurals[version] = s.get()
		}
		if types, err = h.typeConverter(crd, structurals); err != nil {
			return nil, err
		}
	}
	installer := h.server.Installer()
	installer.Serializer = crSerializer{installer.Serializer}
	scopes := map[string]*handlers.Scope{}
	kinds := map[string]schema.GroupVersionKind{}
	versions := newCRDVersions(crd, converter)
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		kinds[v.Name] = schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Status.AcceptedNames.Kind}
		vs := &versionServing{
			h: h, crd: crd, version: v, schema: out.schemas[v.Name], installer: installer,
			storageGV: schema.GroupVersion{Group: crd.Spec.Group, Version: storageVersion},
			converter: converter, types: types, readOnly: readOnly, storages: out.storages,
			cached: cached && noConversionWebhook(crd), versions: versions,
		}
		if err := vs.build(scopes); err != nil {
			return nil, fmt.Errorf("version %s: %w", v.Name, err)
		}
	}
	out.router = endpoints.NewRouter(installer.Serializer)
	out.router.Add(crd.Spec.Group, scopes)
	out.fieldLabels, out.kinds = conversion.NewObjectConvertor(converter), kinds
	return out, nil
}

// lazySchema is the structural schema of a served version, made on first
// use: read-only endpoints need it only once they read an object, and
// most CRDs of a large cluster have none.
type lazySchema struct {
	once    sync.Once
	crd     func() *apiextv1.CustomResourceDefinition // nil once made
	version string
	s       *crschema.Structural
}

// loadedSchema is a lazySchema already made.
func loadedSchema(s *crschema.Structural) *lazySchema {
	l := &lazySchema{s: s}
	l.once.Do(func() {})
	return l
}

// get returns the schema, made from the CRD as it is now. The endpoints
// were built from the same spec, whose schema was checked then.
func (l *lazySchema) get() *crschema.Structural {
	l.once.Do(func() {
		if v := crdapi.GetVersion(l.crd(), l.version); v != nil {
			l.s, _ = versionSchema(*v)
		}
		l.crd = nil
	})
	return l.s
}

// versionSchema is the structural schema of a version.
func versionSchema(v apiextv1.CustomResourceDefinitionVersion) (*crschema.Structural, error) {
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return nil, fmt.Errorf("no schema")
	}
	s, err := crschema.NewStructural(v.Schema.OpenAPIV3Schema)
	if err != nil {
		return nil, err
	}
	// Defaults are served pruned, as kube serves them.
	if err := crschema.PruneDefaults(s); err != nil {
		return nil, err
	}
	return s, nil
}

// versionServing builds the scopes of one served version.
type versionServing struct {
	h         *crdHandler
	crd       *apiextv1.CustomResourceDefinition
	version   apiextv1.CustomResourceDefinitionVersion
	schema    *lazySchema
	installer *endpoints.Config
	storageGV schema.GroupVersion
	converter conversion.Converter
	types     managedfields.TypeConverter
	readOnly  bool
	// storages holds the storage of each version, made by the first build.
	storages *versionStorages
	// cached: the storage made gets a watch cache.
	cached bool
	// versions are the CRD's served versions, for admission.
	versions crdVersions
}

// versionStorages is the storage of each served version of a CRD, made by
// the first endpoints built and taken over by the full ones, and what
// stops their watch caches once the CRD's endpoints are dropped. Builds
// and stop are serialized by the crdEntry's lock.
type versionStorages struct {
	byVersion map[string]storage.Interface
	stops     []func()
}

func (s *versionStorages) stop() {
	for _, stop := range s.stops {
		stop()
	}
	s.stops = nil
}

// noConversionWebhook: a CRD's versions are cached only when converting
// between them needs no webhook. Each version has its own cache, as in
// kube, whose caches call the webhook for every object they take in;
// capstan converts such objects per request instead, so a webhook is
// called only when a client asks for the objects it converts.
func noConversionWebhook(crd *apiextv1.CustomResourceDefinition) bool {
	return crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy != apiextv1.WebhookConverter
}

// build makes the version's store and the scopes of the resource and its
// subresources, in named steps: the resource's names and types, its
// storage (shared by later builds), its strategy, then the scopes.
func (vs *versionServing) build(scopes map[string]*handlers.Scope) error {
	r := vs.resource()
	st, err := vs.storage(r)
	if err != nil {
		return err
	}
	strategy, storeStrategy := vs.strategy(r)
	store := registry.NewStore(registry.StoreConfig{
		Resource: r.gr, Kind: r.gvk.Kind, New: r.newFunc, NewList: r.newList, KeyPrefix: r.keyPrefix,
		Strategy: storeStrategy, Storage: st, Deletion: registry.Deletion(vs.h.storage.Deletion),
	})
	table, err := customresource.NewTableConvertor(vs.version.AdditionalPrinterColumns)
	if err != nil {
		return err
	}
	defaulter, pruner := vs.shapers()
	mainReset := []string(nil)
	if r.hasStatus {
		mainReset = []string{"status"}
	}
	main, err := vs.scope(store, r.gvk, "", r.namespaced, mainReset)
	if err != nil {
		return err
	}
	main.Table, main.Defaulter, main.Pruner, main.SupportedFields = table, defaulter, pruner, store.SupportedFields()
	main.Versions = vs.versions.main
	scopes[r.path] = main
	if r.hasStatus {
		status, err := vs.scope(store.Subresource(strategy.StatusStrategy()), r.gvk, "status", r.namespaced, []string{"spec"})
		if err != nil {
			return err
		}
		status.Table, status.Defaulter, status.Pruner = table, defaulter, pruner
		status.Versions = vs.versions.status
		scopes[r.path+"/status"] = status
	}
	if r.scale != nil {
		s, err := vs.scaleScope(store, r)
		if err != nil {
			return err
		}
		scopes[r.path+"/scale"] = s
	}
	return nil
}

// servedResource is what a version's build derives from its CRD.
type servedResource struct {
	gv         schema.GroupVersion
	gvk        schema.GroupVersionKind
	gr         schema.GroupResource
	path       string // the scopes' key: version/plural
	keyPrefix  string
	namespaced bool
	hasStatus  bool
	scale      *apiextv1.CustomResourceSubresourceScale
	newFunc    func() runtime.Object
	newList    func() runtime.Object
}

// resource derives the version's names and types from its CRD.
func (vs *versionServing) resource() servedResource {
	crd, v := vs.crd, vs.version
	names := crd.Status.AcceptedNames
	gv := schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}
	r := servedResource{
		gv: gv, gvk: gv.WithKind(names.Kind), gr: schema.GroupResource{Group: crd.Spec.Group, Resource: names.Plural},
		path: v.Name + "/" + names.Plural, keyPrefix: "/" + crd.Spec.Group + "/" + names.Plural,
		namespaced: crd.Spec.Scope == apiextv1.NamespaceScoped,
	}
	if sub := v.Subresources; sub != nil {
		r.hasStatus, r.scale = sub.Status != nil, sub.Scale
	}
	r.newFunc = func() runtime.Object {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(r.gvk)
		return u
	}
	r.newList = func() runtime.Object {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gv.WithKind(names.ListKind))
		return l
	}
	return r
}

// storage is the version's storage: the one an earlier build made, or a
// new one, kept for the later builds.
func (vs *versionServing) storage(r servedResource) (storage.Interface, error) {
	if st := vs.storages.byVersion[vs.version.Name]; st != nil {
		return st, nil
	}
	schemaOf := vs.schema.get
	// What storage holds is coerced as kube's decoder does on read:
	// unknown and malformed fields dropped, then defaults applied.
	onRead := func(obj map[string]any) {
		_, _ = crschema.CoerceResource(obj, schemaOf(), crschema.CoerceOptions{DropInvalidFields: true})
		crschema.Default(obj, schemaOf())
	}
	st, stop, err := vs.h.storage.NewServed(storagefactory.Spec{
		Resource: r.gr, KeyPrefix: r.keyPrefix, New: r.newFunc, NewList: r.newList, NoWatchCache: !vs.cached,
		Codec: &crCodec{converter: vs.converter, storage: vs.storageGV, memory: r.gv, defaults: onRead},
	})
	if err != nil {
		return nil, err
	}
	vs.storages.byVersion[vs.version.Name] = st
	vs.storages.stops = append(vs.storages.stops, stop)
	return st, nil
}

// strategy is the custom resource strategy and the one the store uses: a
// read-only build has no schema, so no validators, and its reads still
// get the defaults.
func (vs *versionServing) strategy(r servedResource) (*customresource.Strategy, registry.Strategy) {
	opts := customresource.StrategyOptions{
		Namespaced: r.namespaced, Kind: r.gvk, Status: r.hasStatus, Scale: r.scale, SelectableFields: vs.version.SelectableFields,
	}
	if vs.readOnly {
		strategy := customresource.NewStrategy(opts)
		return strategy, readStrategy{Strategy: strategy, schema: vs.schema}
	}
	structural := vs.schema.get()
	opts.Schema, opts.CEL = structural, cel.NewValidator(structural, true, celPerCallLimit)
	strategy := customresource.NewStrategy(opts)
	return strategy, strategy
}

// shapers are the scopes' defaulter and pruner of decoded bodies, by the
// version's schema.
func (vs *versionServing) shapers() (func(runtime.Object), func(runtime.Object) ([]string, error)) {
	schemaOf := vs.schema.get
	defaulter := func(obj runtime.Object) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			crschema.Default(u.Object, schemaOf())
		}
	}
	pruner := func(obj runtime.Object) ([]string, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return nil, nil
		}
		return crschema.CoerceResource(u.Object, schemaOf(), crschema.CoerceOptions{ReturnUnknownFieldPaths: true})
	}
	return defaulter, pruner
}

// scaleScope is the scope of /scale: autoscaling/v1 Scale over the store.
func (vs *versionServing) scaleScope(store *registry.Store, r servedResource) (*handlers.Scope, error) {
	var fm *managedfields.FieldManager
	if vs.types != nil {
		var err error
		if fm, err = vs.installer.FieldManager(scaleKind, "scale"); err != nil {
			return nil, err
		}
	}
	return &handlers.Scope{
		Resource: r.gv.WithResource(r.gr.Resource), Subresource: "scale", Kind: scaleKind, FieldManager: fm,
		Namespaced: r.namespaced, Storage: customresource.NewScaleREST(store, r.scale, r.gv, customresource.ReplicasPaths(vs.crd)),
		Common: vs.installer.Common, Table: customresource.NewScaleTableConvertor(r.scale), PatchTypes: crPatchTypes,
		Versions: vs.versions.scale,
	}, nil
}

// scope is the handlers' scope of the resource or one of its subresources.
func (vs *versionServing) scope(storage registryStorage, gvk schema.GroupVersionKind, sub string, namespaced bool, reset []string) (*handlers.Scope, error) {
	fm, err := vs.fieldManager(gvk, sub, reset)
	if err != nil {
		return nil, err
	}
	return &handlers.Scope{
		Resource: gvk.GroupVersion().WithResource(vs.crd.Status.AcceptedNames.Plural), Subresource: sub, Kind: gvk,
		Namespaced: namespaced, Storage: storage, Common: vs.installer.Common,
		FieldManager: fm, PatchTypes: crPatchTypes, Types: vs.types,
	}, nil
}

// registryStorage is what a scope's storage is: any REST storage.
type registryStorage = interface{ New() runtime.Object }

// fieldManager is the managed-fields tracker of one endpoint, typed by the
// CRD's schemas.
func (vs *versionServing) fieldManager(gvk schema.GroupVersionKind, sub string, reset []string) (*managedfields.FieldManager, error) {
	if vs.types == nil {
		return nil, nil
	}
	var resetFields map[fieldpath.APIVersion]fieldpath.Filter
	if len(reset) > 0 {
		set := fieldpath.NewSet()
		for _, f := range reset {
			set.Insert(fieldpath.MakePathOrDie(f))
		}
		resetFields = map[fieldpath.APIVersion]fieldpath.Filter{
			fieldpath.APIVersion(gvk.GroupVersion().String()): fieldpath.NewExcludeSetFilter(set),
		}
	}
	structural := vs.schema.get()
	return managedfields.NewDefaultCRDFieldManager(vs.types, conversion.NewObjectConvertor(vs.converter),
		defaulterFunc(func(obj runtime.Object) {
			if u, ok := obj.(*unstructured.Unstructured); ok {
				crschema.Default(u.Object, structural)
			}
		}), unstructuredCreater{}, gvk, gvk.GroupVersion(), sub, resetFields)
}

// readStrategy is the strategy of read-only endpoints: the strategy
// without a schema, which validates nothing, but for the defaults that
// reads apply.
type readStrategy struct {
	*customresource.Strategy
	schema *lazySchema
}

// Default applies the schema's defaults.
func (s readStrategy) Default(obj runtime.Object) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		crschema.Default(u.Object, s.schema.get())
	}
}

type defaulterFunc func(obj runtime.Object)

func (f defaulterFunc) Default(obj runtime.Object) { f(obj) }

// unstructuredCreater makes empty custom resources for the field manager.
type unstructuredCreater struct{}

func (unstructuredCreater) New(kind schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kind)
	return u, nil
}

// celPerCallLimit bounds the cost of one CEL rule evaluation, as kube's
// per-call limit does.
const celPerCallLimit = 1000000

// crPatchTypes are the patches custom resources take: no strategic merge
// patch, which needs Go types.
var crPatchTypes = []types.PatchType{types.JSONPatchType, types.MergePatchType, types.ApplyYAMLPatchType}
