// Package rest names the capabilities a REST storage may have. The API
// installer discovers them by type assertion: a storage that is a Getter
// gets a GET route, a Watcher a watch route, and so on.
package rest

import (
	"context"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/storage"
)

// Storage is the least a REST storage is: a maker of empty objects.
type Storage interface {
	New() runtime.Object
}

// Scoper tells whether the resource lives in namespaces.
type Scoper interface {
	NamespaceScoped() bool
}

// Getter reads one object.
type Getter interface {
	Get(ctx context.Context, name string, opts *metav1.GetOptions) (runtime.Object, error)
}

// ResponseGetter reads one object as Get does, for a response only: the
// object may be shared and read only by serializers (a
// runtime.CacheableObject whose GetObject returns a copy), so that GETs
// of an unchanged object reuse its encodings. A type that embeds a
// ResponseGetter and changes Get must change GetForResponse too.
type ResponseGetter interface {
	GetForResponse(ctx context.Context, name string, opts *metav1.GetOptions) (runtime.Object, error)
}

// Lister lists objects.
type Lister interface {
	NewList() runtime.Object
	List(ctx context.Context, opts *ListOptions) (runtime.Object, error)
}

// ResponseLister lists as List does, for a response only: items, when not
// nil, are the selected objects as the watch cache hands them over (see
// storage.ListItems), read one at a time and only by serializers, and
// list holds only the list's metadata; nil items means they are in list's
// Items. A list of N objects then never holds N copies. A type that
// embeds a ResponseLister and changes List must change ListForResponse
// too.
type ResponseLister interface {
	ListForResponse(ctx context.Context, opts *ListOptions) (list runtime.Object, items storage.ListItems, err error)
}

// Watcher watches objects.
type Watcher interface {
	Watch(ctx context.Context, opts *ListOptions) (watch.Interface, error)
}

// Creater creates an object. validate is admission's last word on it.
type Creater interface {
	Create(ctx context.Context, obj runtime.Object, validate ValidateObjectFunc, opts *metav1.CreateOptions) (runtime.Object, error)
}

// Updater replaces an object with the result of objInfo, or creates it when
// the resource allows create on update (or forceAllowCreate is set, as for
// server-side apply). created reports which happened.
type Updater interface {
	Update(ctx context.Context, name string, objInfo UpdatedObjectInfo, createValidation ValidateObjectFunc,
		updateValidation ValidateObjectUpdateFunc, forceAllowCreate bool, opts *metav1.UpdateOptions) (obj runtime.Object, created bool, err error)
}

// Patcher can be patched: a patch reads the object and updates it. An
// update-only subresource such as namespaces/finalize is no Patcher.
type Patcher interface {
	Getter
	Updater
}

// GracefulDeleter deletes an object, at once or by marking it for deletion
// when finalizers or a grace period hold it. deleted reports which.
type GracefulDeleter interface {
	Delete(ctx context.Context, name string, validate ValidateObjectFunc, opts *metav1.DeleteOptions) (obj runtime.Object, deleted bool, err error)
}

// CollectionDeleter deletes every object a list would return.
type CollectionDeleter interface {
	DeleteCollection(ctx context.Context, validate ValidateObjectFunc, opts *metav1.DeleteOptions, listOpts *ListOptions) (runtime.Object, error)
}

// ResponseCollectionDeleter deletes as DeleteCollection does, for a
// response only: the list it answers with comes as ResponseLister's does
// (items, when not nil, apart from list), so that deleting N objects
// never holds N decoded copies of them. A type that embeds a
// ResponseCollectionDeleter and changes DeleteCollection must change
// DeleteCollectionForResponse too.
type ResponseCollectionDeleter interface {
	DeleteCollectionForResponse(ctx context.Context, validate ValidateObjectFunc, opts *metav1.DeleteOptions, listOpts *ListOptions) (list runtime.Object, items storage.ListItems, err error)
}

// UpdatedObjectInfo computes the new object of an update from the current
// one (nil when there is none). Patch applies the patch here, inside the
// storage's optimistic-concurrency loop, so that a patch is never lost.
type UpdatedObjectInfo interface {
	UpdatedObject(ctx context.Context, old runtime.Object) (runtime.Object, error)
}

// Preconditioner is an UpdatedObjectInfo whose update holds only if the
// stored object meets its preconditions: kube's PUT whose body carries a
// uid updates only the object of that uid.
type Preconditioner interface {
	Preconditions() *metav1.Preconditions
}

// KeepPreconditions is f, an update that wraps objInfo's, with objInfo's
// preconditions (if it has any): a storage that checks the new object on
// its way keeps the PUT's uid precondition.
func KeepPreconditions(objInfo UpdatedObjectInfo, f UpdatedObjectFunc) UpdatedObjectInfo {
	return wrappedInfo{inner: objInfo, f: f}
}

type wrappedInfo struct {
	inner UpdatedObjectInfo
	f     UpdatedObjectFunc
}

func (w wrappedInfo) UpdatedObject(ctx context.Context, old runtime.Object) (runtime.Object, error) {
	return w.f(ctx, old)
}

func (w wrappedInfo) Preconditions() *metav1.Preconditions {
	if p, ok := w.inner.(Preconditioner); ok {
		return p.Preconditions()
	}
	return nil
}

// UpdatedObjectFunc adapts a function to UpdatedObjectInfo.
type UpdatedObjectFunc func(ctx context.Context, old runtime.Object) (runtime.Object, error)

// UpdatedObject calls f.
func (f UpdatedObjectFunc) UpdatedObject(ctx context.Context, old runtime.Object) (runtime.Object, error) {
	return f(ctx, old)
}

// ValidateObjectFunc is admission's validation of a create or delete. It
// must not change obj: storage hands it the object it writes, not a copy.
type ValidateObjectFunc func(ctx context.Context, obj runtime.Object) error

// ValidateObjectUpdateFunc is admission's validation of an update. It must
// not change obj or old: storage hands it its own objects, not copies.
type ValidateObjectUpdateFunc func(ctx context.Context, obj, old runtime.Object) error

// ValidateAllObjectFunc accepts everything.
func ValidateAllObjectFunc(context.Context, runtime.Object) error { return nil }

// ValidateAllObjectUpdateFunc accepts every update.
func ValidateAllObjectUpdateFunc(context.Context, runtime.Object, runtime.Object) error { return nil }

// ListOptions are the parsed options of a list or watch.
type ListOptions struct {
	LabelSelector        labels.Selector
	FieldSelector        fields.Selector
	ResourceVersion      string
	ResourceVersionMatch metav1.ResourceVersionMatch
	Limit                int64
	Continue             string
	AllowWatchBookmarks  bool
	SendInitialEvents    *bool
	TimeoutSeconds       *int64
	// Objects: see storage.ListOptions.Objects.
	Objects storage.ObjectSharing
}

// TableConvertor turns objects and lists into the rows kubectl prints.
type TableConvertor interface {
	ConvertToTable(ctx context.Context, obj runtime.Object, opts *metav1.TableOptions) (*metav1.Table, error)
}

// NamedCreater creates through a subresource of a named object, such as
// pods/binding and pods/eviction: POST to .../pods/<name>/binding.
type NamedCreater interface {
	Create(ctx context.Context, name string, obj runtime.Object, validate ValidateObjectFunc, opts *metav1.CreateOptions) (runtime.Object, error)
}

// Connecter serves a subresource by handing the request itself to a
// handler of its own: the node-facing subresources (pods/log, exec,
// attach, portforward, and the proxies), which stream to a kubelet or a
// backend rather than read or write objects.
type Connecter interface {
	// NewConnectOptions returns an empty options struct the query is
	// decoded into; when subpath is true, the path after the subresource
	// is set as the query parameter subpathKey first (proxies).
	NewConnectOptions() (opts runtime.Object, subpath bool, subpathKey string)
	// ConnectMethods are the HTTP methods served.
	ConnectMethods() []string
	// Connect returns the handler of the request for the object name.
	Connect(ctx context.Context, name string, opts runtime.Object) (http.Handler, error)
}

// ReadingConnecter is a Connecter whose requests are reads that kube
// serves as gets (pods/log), which admission does not see; those of
// other Connecters are admitted as CONNECT.
type ReadingConnecter interface {
	Connecter
	ConnectReads()
}
