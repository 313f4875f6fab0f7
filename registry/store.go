package registry

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/request"
	"github.com/capstan-io/capstan/storage"
)

// Store is the REST storage of one resource: a storage.Interface shaped by a
// Strategy. It is used by value-free pointer; build it with NewStore.
type Store struct {
	resource   schema.GroupResource // for messages: configmaps, deployments.apps
	kind       string               // for delete Status details
	newFunc    func() runtime.Object
	newList    func() runtime.Object
	keyPrefix  string // "/configmaps", relative to the storage prefix
	strategy   Strategy
	storage    storage.Interface
	ttl        func(obj runtime.Object) uint64
	returnsObj bool   // delete answers with the object, not a Status
	mayCreate  func() // StoreConfig.MayCreate
	// attrs is the resource's attribute function (AttrFunc of the main
	// strategy), which a subresource's store keeps.
	attrs    storage.AttrFunc
	deletion Deletion
}

// Deletion is how a store deletes, kube's --delete-collection-workers and
// --enable-garbage-collector. The zero value is capstan's default.
type Deletion struct {
	// CollectionWorkers is how many deletes of one DeleteCollection run at
	// once; 0 means defaultCollectionWorkers.
	CollectionWorkers int
	// NoGarbageCollector leaves finalizers alone on delete: without a
	// garbage collector nobody would remove orphan or foregroundDeletion.
	NoGarbageCollector bool
}

// defaultCollectionWorkers overlaps a DeleteCollection's deletes, each
// waiting on a write to etcd; kube's default is one at a time.
const defaultCollectionWorkers = 8

func (d Deletion) collectionWorkers() int {
	if d.CollectionWorkers > 0 {
		return d.CollectionWorkers
	}
	return defaultCollectionWorkers
}

// StoreConfig is what NewStore needs.
type StoreConfig struct {
	Resource  schema.GroupResource
	Kind      string
	New       func() runtime.Object
	NewList   func() runtime.Object
	KeyPrefix string // e.g. "/configmaps"; defaults to "/" + Resource.Resource
	Strategy  Strategy
	Storage   storage.Interface
	// TTL, if set, gives each written object a time to live in seconds
	// (events live for --event-ttl).
	TTL func(obj runtime.Object) uint64
	// ReturnDeletedObject makes DELETE answer with the deleted object rather
	// than a Status, as kube does for pods and namespaces.
	ReturnDeletedObject bool
	// MayCreate, if set, is called before every write that may create an
	// object (a create, an update that may create) reaches storage: the
	// garbage collector starts watching a resource then (LazyResources).
	MayCreate func()
	// Deletion is --delete-collection-workers and --enable-garbage-collector.
	Deletion Deletion
}

// NewStore returns a Store.
func NewStore(c StoreConfig) *Store {
	if c.KeyPrefix == "" {
		c.KeyPrefix = "/" + c.Resource.Resource
	}
	return &Store{
		resource: c.Resource, kind: c.Kind, newFunc: c.New, newList: c.NewList,
		keyPrefix: c.KeyPrefix, strategy: c.Strategy, storage: c.Storage, ttl: c.TTL,
		returnsObj: c.ReturnDeletedObject, mayCreate: c.MayCreate, attrs: AttrFunc(c.Strategy), deletion: c.Deletion,
	}
}

var (
	_ rest.Getter            = (*Store)(nil)
	_ rest.Lister            = (*Store)(nil)
	_ rest.ResponseLister    = (*Store)(nil)
	_ rest.Watcher           = (*Store)(nil)
	_ rest.Creater           = (*Store)(nil)
	_ rest.Updater           = (*Store)(nil)
	_ rest.GracefulDeleter   = (*Store)(nil)
	_ rest.CollectionDeleter = (*Store)(nil)
	_ rest.Scoper            = (*Store)(nil)
)

// New returns an empty object of the resource.
func (s *Store) New() runtime.Object { return s.newFunc() }

// NewList returns an empty list of the resource.
func (s *Store) NewList() runtime.Object { return s.newList() }

// NamespaceScoped reports the strategy's scope.
func (s *Store) NamespaceScoped() bool { return s.strategy.NamespaceScoped() }

// Strategy returns the store's strategy.
func (s *Store) Strategy() Strategy { return s.strategy }

// Resource returns the group resource the store serves.
func (s *Store) Resource() schema.GroupResource { return s.resource }

// WithStrategy returns a store over the same storage with another strategy:
// the status subresource's store is the main store with a status strategy.
func (s *Store) WithStrategy(strategy Strategy) *Store {
	c := *s
	c.strategy = strategy
	return &c
}

// collectionKey is the key prefix of the objects a request may see: the
// request's namespace, or every namespace.
func (s *Store) collectionKey(ctx context.Context) (string, error) {
	ns := request.NamespaceFrom(ctx)
	if !s.NamespaceScoped() || ns == "" {
		return s.keyPrefix + "/", nil
	}
	if msgs := path.IsValidPathSegmentName(ns); len(msgs) > 0 {
		return "", apierrors.NewBadRequest(fmt.Sprintf("Namespace parameter invalid: %q: %s", ns, strings.Join(msgs, ";")))
	}
	return s.keyPrefix + "/" + ns + "/", nil
}

// objectKey is the key of one object. Names and namespaces that could
// escape the resource's prefix are refused here, before any storage access.
func (s *Store) objectKey(ctx context.Context, name string) (string, error) {
	if name == "" {
		return "", apierrors.NewBadRequest("Name parameter required.")
	}
	if msgs := path.IsValidPathSegmentName(name); len(msgs) > 0 {
		return "", apierrors.NewBadRequest(fmt.Sprintf("Name parameter invalid: %q: %s", name, strings.Join(msgs, ";")))
	}
	if !s.NamespaceScoped() {
		return s.keyPrefix + "/" + name, nil
	}
	ns := request.NamespaceFrom(ctx)
	if ns == "" {
		return "", apierrors.NewBadRequest("Namespace parameter required.")
	}
	prefix, err := s.collectionKey(ctx)
	if err != nil {
		return "", err
	}
	return prefix + name, nil
}

// Get reads one object.
func (s *Store) Get(ctx context.Context, name string, opts *metav1.GetOptions) (runtime.Object, error) {
	key, err := s.objectKey(ctx, name)
	if err != nil {
		return nil, err
	}
	out := s.newFunc()
	if err := s.storage.Get(ctx, key, storage.GetOptions{ResourceVersion: opts.ResourceVersion}, out); err != nil {
		return nil, s.interpretError(err, name)
	}
	s.defaultObject(out)
	return out, nil
}

// List lists the objects the options select.
func (s *Store) List(ctx context.Context, opts *rest.ListOptions) (runtime.Object, error) {
	return s.list(ctx, opts, nil)
}

// ListForResponse lists as List does, taking the watch cache's objects
// themselves as the items when the cache serves the list.
func (s *Store) ListForResponse(ctx context.Context, opts *rest.ListOptions) (runtime.Object, storage.ListItems, error) {
	var items storage.ListItems
	list, err := s.list(ctx, opts, &items)
	return list, items, err
}

// list lists into a new list object, or into *shared (see
// storage.ListOptions.SharedItems) when not nil.
func (s *Store) list(ctx context.Context, opts *rest.ListOptions, shared *storage.ListItems) (runtime.Object, error) {
	key, err := s.collectionKey(ctx)
	if err != nil {
		return nil, err
	}
	list := s.newList()
	so := s.storageListOptions(opts)
	if shared != nil {
		so.Objects, so.SharedItems = storage.CachedObjects, shared
	}
	if single, ok := s.singleObjectKey(ctx, opts.FieldSelector); ok {
		key, so.Recursive = single, false
	}
	// No defaults here: storage decodes objects defaulted (the codec's
	// defaults), and with opts.Objects the items share the watch cache's
	// objects, which a list must never change.
	if err := s.storage.GetList(ctx, key, so, list); err != nil {
		return nil, s.interpretError(err, "")
	}
	return list, nil
}

// Watch watches the objects the options select.
func (s *Store) Watch(ctx context.Context, opts *rest.ListOptions) (watch.Interface, error) {
	key, err := s.collectionKey(ctx)
	if err != nil {
		return nil, err
	}
	so := s.storageListOptions(opts)
	if single, ok := s.singleObjectKey(ctx, opts.FieldSelector); ok {
		key, so.Recursive = single, false
	}
	w, err := s.storage.Watch(ctx, key, so)
	if err != nil {
		return nil, s.interpretError(err, "")
	}
	return w, nil
}

func (s *Store) storageListOptions(opts *rest.ListOptions) storage.ListOptions {
	return storage.ListOptions{
		ResourceVersion:      opts.ResourceVersion,
		ResourceVersionMatch: storage.ResourceVersionMatch(opts.ResourceVersionMatch),
		Recursive:            true,
		ProgressNotify:       opts.AllowWatchBookmarks,
		SendInitialEvents:    opts.SendInitialEvents,
		Objects:              opts.Objects,
		Predicate: storage.SelectionPredicate{
			Label: opts.LabelSelector, Field: opts.FieldSelector,
			GetAttrs: s.attrs, ResourceAttrs: true, Limit: opts.Limit, Continue: opts.Continue,
		},
	}
}

// AttrFunc returns the attribute function of a resource served with
// strategy: an object's labels, and the fields a field selector may name
// (ObjectMetaFields and the strategy's Fields). The Store's predicates
// use it, and so does the resource's watch cache (cache.Config.Attrs),
// which evaluates them on the attributes it kept.
func AttrFunc(strategy Strategy) storage.AttrFunc {
	namespaced := strategy.NamespaceScoped()
	fsel, _ := strategy.(FieldSelectable)
	return func(obj runtime.Object) (labels.Set, fields.Set, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, nil, err
		}
		fs := ObjectMetaFields(m, namespaced)
		if fsel != nil {
			for k, v := range fsel.Fields(obj) {
				fs[k] = v
			}
		}
		return labels.Set(m.GetLabels()), fs, nil
	}
}

// SupportedFields returns the field selector keys of the resource.
func (s *Store) SupportedFields() fields.Set {
	_, fs, _ := s.attrs(s.newFunc())
	return fs
}

func (s *Store) defaultObject(obj runtime.Object) {
	if d, ok := s.strategy.(Defaulter); ok {
		d.Default(obj)
	}
}

// ObjectMetaFields are the field selector fields every object has.
func ObjectMetaFields(m metav1.Object, namespaced bool) fields.Set {
	fs := fields.Set{"metadata.name": m.GetName()}
	if namespaced {
		fs["metadata.namespace"] = m.GetNamespace()
	}
	return fs
}

// singleObjectKey is the key of the one object a metadata.name=x selector
// can select, which is read rather than listed, as in kube. There is none
// when the name cannot be a key, or a namespaced list spans namespaces: the
// list then filters as usual.
func (s *Store) singleObjectKey(ctx context.Context, sel fields.Selector) (string, bool) {
	if sel == nil {
		return "", false
	}
	name, ok := sel.RequiresExactMatch("metadata.name")
	if !ok {
		return "", false
	}
	key, err := s.objectKey(ctx, name)
	return key, err == nil
}
