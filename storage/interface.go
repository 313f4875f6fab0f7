// Package storage defines the storage.Interface that the registry writes
// through, the typed errors it returns, and the options of its reads. The
// etcd3 package implements it; a watch cache will wrap it. Nothing above this
// package knows which engine sits behind the interface.
package storage

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// Interface is the storage of one resource's objects, keyed by strings such
// as "/configmaps/default/a": as in kube, keys start with the resource's
// prefix and the backend adds its own prefix in front (etcd3 stores that
// object at "/registry/configmaps/default/a"). A key outside the resource's
// prefix is refused with ErrInvalidKey. resourceVersion is the revision of
// the backend and is set on every object that leaves the interface.
type Interface interface {
	// Create stores obj at key if nothing is there and decodes the stored
	// object into out. ErrKeyExists if key is taken.
	Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error

	// Get reads key into out. ErrNotFound unless opts.IgnoreNotFound, in which
	// case out is left as the zero object.
	Get(ctx context.Context, key string, opts GetOptions, out runtime.Object) error

	// GetList lists the objects under key (a prefix ending in "/", or a single
	// object's key when opts.Recursive is false) that match opts.Predicate into
	// listObj, honouring limit, continue and the resourceVersion rules.
	GetList(ctx context.Context, key string, opts ListOptions, listObj runtime.Object) error

	// GuaranteedUpdate reads key, calls tryUpdate with the current object and
	// writes its result if the object has not changed since the read,
	// retrying tryUpdate on a conflicting write. Preconditions are checked
	// against every object read. If cachedExisting is not nil it is tried as
	// the current state first. The stored result is decoded into dest.
	GuaranteedUpdate(ctx context.Context, key string, dest runtime.Object, ignoreNotFound bool,
		preconditions *Preconditions, tryUpdate UpdateFunc, cachedExisting runtime.Object) error

	// Delete removes key if the preconditions hold and validateDeletion
	// accepts the current object, retrying on conflict. The deleted object
	// (with the resourceVersion of the deletion) is decoded into out.
	Delete(ctx context.Context, key string, out runtime.Object, preconditions *Preconditions,
		validateDeletion ValidateObjectFunc, cachedExisting runtime.Object) error

	// Watch streams the changes under key from opts.ResourceVersion, filtered
	// by opts.Predicate. See ListOptions for the meaning of its fields.
	Watch(ctx context.Context, key string, opts ListOptions) (watch.Interface, error)

	// Count returns how many objects are stored under key.
	Count(ctx context.Context, key string) (int64, error)

	// CurrentResourceVersion returns the current revision of the backend.
	CurrentResourceVersion(ctx context.Context) (uint64, error)
}

// UpdateFunc computes the new object from the current one. res carries the
// current object's metadata from the backend. Returning a nil object with a
// nil error is not allowed; return an error to abort the update.
// A non-nil ttl sets the object's time to live.
type UpdateFunc func(input runtime.Object, res ResponseMeta) (output runtime.Object, ttl *uint64, err error)

// ResponseMeta is what the backend knows about an object beside its bytes.
type ResponseMeta struct {
	TTL             int64
	ResourceVersion uint64
}

// ValidateObjectFunc may refuse an operation on the current object.
type ValidateObjectFunc func(ctx context.Context, obj runtime.Object) error

// Preconditions must hold for an update or delete to take place.
type Preconditions struct {
	UID             *types.UID
	ResourceVersion *string
}

// ResourceVersionMatch mirrors metav1.ResourceVersionMatch for the storage layer.
type ResourceVersionMatch string

const (
	// MatchDefault: with resourceVersion "" a consistent read of the latest
	// state; with "0" any state; with N a state not older than N.
	MatchDefault ResourceVersionMatch = ""
	// MatchNotOlderThan: a state not older than ResourceVersion.
	MatchNotOlderThan ResourceVersionMatch = "NotOlderThan"
	// MatchExact: exactly the state at ResourceVersion (410 if compacted).
	MatchExact ResourceVersionMatch = "Exact"
)

// GetOptions are the options of a Get.
type GetOptions struct {
	IgnoreNotFound bool
	// ResourceVersion "" reads the latest state; "0" any state; N a state
	// not older than N (ErrTooLargeResourceVersion if N is in the future).
	ResourceVersion string
}

// ListOptions are the options of GetList and Watch.
type ListOptions struct {
	// ResourceVersion and ResourceVersionMatch follow the rules of the
	// Kubernetes API concepts page. For Watch, "" and "0" start from the
	// current state and first send an ADDED event for every matching object;
	// N sends the changes after revision N (ErrExpired if compacted).
	ResourceVersion      string
	ResourceVersionMatch ResourceVersionMatch
	Predicate            SelectionPredicate
	// Recursive is true when key is a prefix (a collection) rather than
	// the key of one object.
	Recursive bool
	// ProgressNotify asks Watch for BOOKMARK events carrying the current
	// revision when nothing else happens (allowWatchBookmarks).
	ProgressNotify bool
	// RecordTimes asks Watch for its changes' objects as *TimedObject,
	// with the time each was decoded (the initial events and bookmarks
	// come bare). Storage that does not record times ignores it.
	RecordTimes bool
	// SendInitialEvents asks Watch for an ADDED event per existing object
	// followed, with ProgressNotify, by a BOOKMARK annotated
	// k8s.io/initial-events-end (WatchList).
	// nil means the default of the resourceVersion rules above.
	SendInitialEvents *bool
	// Objects says what Watch may send as its events' objects, and what
	// GetList may put in its list's items; storage without a cache hands
	// out objects of the receiver's own in any case.
	Objects ObjectSharing
	// SharedItems, set with CachedObjects, lets GetList hand over the
	// selected objects (the cache's, in key order) in *SharedItems rather
	// than put them in the list's Items, which it then leaves empty: a
	// list of N objects then costs N references, not N objects. A non-nil
	// *SharedItems says it did; storage that does not share (etcd3)
	// leaves it nil and fills the list's Items. The receiver (the list
	// handler, which encodes them) must not change them.
	SharedItems *ListItems
}

// ListItems are the items of a list handed over apart from it
// (ListOptions.SharedItems), read one at a time by a receiver that
// encodes each before it asks for the next: the watch cache may decode
// each anew from its encoding, and the receiver then holds one at a time.
type ListItems interface {
	Len() int
	// At returns item i, read only.
	At(i int) (runtime.Object, error)
	// Key returns item i's storage key, read without decoding the item:
	// a receiver that needs only names (DeleteCollection) decodes none.
	Key(i int) string
	// Identity returns a pointer that stands for the version of item i
	// the cache holds: the same in every list for as long as the cache
	// holds that version, and unreachable from the cache once it does
	// not, so that what is made from the item (its encodings) can be
	// remembered by it, weakly.
	Identity(i int) *byte
	// Protobuf returns, if the items are kept as protobuf at version gv,
	// what returns item i's protobuf message (the bytes a list writes
	// after the item's tag and length); else nil.
	Protobuf(gv schema.GroupVersion) func(i int) ([]byte, error)
}

// ProtobufEnvelope is implemented by the objects of a watch's initial
// events (with EncodedObjects) that the watch cache keeps encoded as
// kube's protobuf envelope.
type ProtobufEnvelope interface {
	// Protobuf returns the object as kube's protobuf envelope at version
	// gv, byte for byte what the codec writes for it at gv, if it is kept
	// at gv; else false. The bytes are the cache's: read only.
	Protobuf(gv schema.GroupVersion) ([]byte, bool)
}

// ObjectSharing says whether a watch's receiver owns the objects of its
// events, or shares them with the watch cache and other watches, which
// saves a copy per watch and event; and whether a list's receiver owns
// its items, or shares their maps, slices and pointers with the watch
// cache, which saves a copy of every object per list.
type ObjectSharing int

const (
	// CopiedObjects: every event carries a copy, the receiver's to change.
	CopiedObjects ObjectSharing = iota
	// EncodedObjects: the objects of live events are runtime.CacheableObject
	// wrappers shared by every watch that asked the same. The receiver
	// (the watch handler) encodes them through a serializer, which
	// encodes each once per wire format, or takes a copy with GetObject.
	// Those of initial events may be runtime.CacheableObject wrappers too,
	// of the watch's own, and may be ProtobufEnvelope.
	EncodedObjects
	// CachedObjects: the events carry the cache's own objects. The
	// receiver (an in-process informer whose users only read) never
	// changes them, so the cache and it hold one object between them.
	// A list's items are shallow copies of the cache's objects (each
	// struct the list's own, what it points to the cache's); EncodedObjects
	// lists the same. The receiver (the list handler, which encodes them)
	// never changes what they point to.
	CachedObjects
)
