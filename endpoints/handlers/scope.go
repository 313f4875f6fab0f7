// Package handlers serves the verbs of one resource: get, list, watch,
// create, update, patch, delete and deletecollection. Each handler decodes
// and checks the request, calls the REST storage and writes the answer.
//
// Responses encode into pooled buffers. Lists from the watch cache are
// written item by item from its objects (JSON, protobuf and metadata forms,
// byte for byte the codec's encoding of the whole list): protobuf items are
// the cache's stored messages as they are when the stored version is the
// response's, and from a cache that keeps objects decoded, protobuf lists of
// up to 1,000 items reuse each object's encoding (weakly keyed by the
// object, 32 MiB at most). A watch event of a shared object is framed once
// per encoding and event type and written by every watch in one write; a
// protobuf WatchList's initial events are framed straight around the
// cache's stored bytes (storage.ProtobufEnvelope); a watch that falls
// behind writes its events in batches and flushes once it has caught up.
// A deletecollection's answer, the objects it deleted, is written like a
// list (rest.ResponseCollectionDeleter).
package handlers

import (
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/endpoints/wire"
	"github.com/capstan-io/capstan/registry/rest"
)

// Scope is what the handlers of one resource (or subresource) share.
type Scope struct {
	Resource    schema.GroupVersionResource
	Subresource string
	Kind        schema.GroupVersionKind // of the objects the endpoint takes and returns
	Namespaced  bool

	Common
	Storage rest.Storage
	// Defaulter applies the resource's defaults to decoded bodies.
	Defaulter func(obj runtime.Object)
	// PatchTypes, if set, are the only patch media types served, with
	// kube's 415 listing them for others (custom resources take no
	// strategic merge patch).
	PatchTypes []types.PatchType
	// Pruner, if set, drops the fields of a decoded body that the
	// resource's schema does not know and returns their paths, which are
	// then unknown fields for fieldValidation (custom resources).
	Pruner func(obj runtime.Object) ([]string, error)
	// Table turns objects into rows; nil gives the default Name/Created At table.
	Table rest.TableConvertor
	// SupportedFields are the field selector keys the resource allows.
	SupportedFields fields.Set

	// FieldManager records managed fields on writes and merges server-side
	// apply patches; nil records nothing and refuses apply.
	FieldManager *managedfields.FieldManager
	// UpdateFieldManager, when set, records the managed fields of
	// non-apply writes in FieldManager's stead: one that need not look at
	// the fields the endpoint resets.
	UpdateFieldManager *managedfields.FieldManager
	// Types are the structured-merge-diff types of the resource's kinds,
	// for admission policies' ApplyConfiguration; nil when not typed.
	Types managedfields.TypeConverter
	// Versions are the versions the resource is served at, for
	// admission's matchPolicy Equivalent; nil when only this one.
	Versions *admission.Versions
}

// Common is what every scope of a server shares: its codecs, admission
// chain, limits and logger. The server's installer (endpoints.Config)
// holds one and gives it to each scope it makes.
type Common struct {
	Serializer runtime.NegotiatedSerializer
	// ParameterCodec decodes query parameters into option structs.
	ParameterCodec runtime.ParameterCodec
	Creater        runtime.ObjectCreater
	Typer          runtime.ObjectTyper
	// Admission mutates and validates writes; nil admits everything.
	Admission *admission.Chain

	MaxRequestBodyBytes int64
	// MinRequestTimeout bounds watches without timeoutSeconds: each lasts a
	// random time between it and twice it, as in kube.
	MinRequestTimeout time.Duration
	Logger            *slog.Logger
	// Wire is what the server's list and watch encoders keep between
	// responses; nil keeps nothing.
	Wire *wire.Caches
}

// GroupResource is the group and resource of the scope, as errors name them.
func (s *Scope) GroupResource() schema.GroupResource {
	return s.Resource.GroupResource()
}

func (s *Scope) defaults(obj runtime.Object) {
	if s.Defaulter != nil {
		s.Defaulter(obj)
	}
}
