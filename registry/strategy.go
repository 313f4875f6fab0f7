// Package registry holds the generic Store: the REST storage of one resource
// over a storage.Interface, shaped by a per-resource Strategy.
package registry

import (
	"context"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Strategy is what makes one resource different from another in the Store.
// The Store does everything common to all resources (names, uid,
// timestamps, resourceVersion, finalizers, preconditions, metadata
// validation); a Strategy does the rest.
type Strategy interface {
	// NamespaceScoped reports whether objects live in a namespace.
	NamespaceScoped() bool
	// PrepareForCreate resets what a client may not set on create (status
	// for most resources) and sets what the server owns (generation).
	PrepareForCreate(ctx context.Context, obj runtime.Object)
	// Validate returns the errors of a new object, metadata excluded.
	Validate(ctx context.Context, obj runtime.Object) field.ErrorList
	// PrepareForUpdate carries over from old what an update may not change
	// (status on the main resource, spec on the status subresource) and
	// bumps generation when the spec changed.
	PrepareForUpdate(ctx context.Context, obj, old runtime.Object)
	// ValidateUpdate returns the errors of an update, metadata excluded:
	// immutable fields and the rules of Validate.
	ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList
}

// Defaulter is implemented by strategies of resources with defaulted fields.
// Default runs on every decoded request body, before admission, and on
// objects read from storage, as kube's scheme defaulting does.
type Defaulter interface {
	Default(obj runtime.Object)
}

// CreateOnUpdater is implemented by strategies whose resources may be created
// by an update (PUT) of a missing object, such as leases and events.
type CreateOnUpdater interface {
	AllowCreateOnUpdate() bool
}

// FieldSelectable is implemented by strategies of resources that support field
// selectors beyond metadata.name and metadata.namespace. Fields returns the
// extra fields of obj; the keys it returns for an empty object are the
// supported field selector keys.
type FieldSelectable interface {
	Fields(obj runtime.Object) fields.Set
}

// WarningsOnCreate and WarningsOnUpdate let a strategy add Warning headers.
type WarningsOnCreate interface {
	WarningsOnCreate(ctx context.Context, obj runtime.Object) []string
}

// WarningsOnUpdate is the update counterpart of WarningsOnCreate.
type WarningsOnUpdate interface {
	WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string
}

// OwnCreateMetadata is implemented by strategies that validate a new
// object's metadata themselves, where kube's rules put it (kube's core/v1
// events do not validate it; events.k8s.io/v1 after the involved object):
// the Store then checks only what kube's generic create checks (labels,
// annotations, owners, a name that is a path segment), after the
// strategy and only if the strategy found nothing.
type OwnCreateMetadata interface {
	ValidatesCreateMetadata()
}

// InvalidKind is implemented by strategies whose 422 errors name another
// kind than the resource's: kube names the internal kind it validated
// (events.k8s.io/v1 events are core Events).
type InvalidKind interface {
	InvalidKind() schema.GroupKind
}

// NameValidator is implemented by strategies whose names follow another rule
// than a DNS subdomain (namespaces are DNS labels). prefix is true when name
// is a generateName prefix. It returns the messages of a field.Invalid.
type NameValidator interface {
	ValidateName(name string, prefix bool) []string
}

// Canonicalizer is implemented by strategies that normalise an object after
// it is validated, once its name is final (a namespace's name label).
type Canonicalizer interface {
	Canonicalize(obj runtime.Object)
}

// UnconditionalUpdater is implemented by strategies that decide whether an
// update without metadata.resourceVersion is allowed; without it, it is.
// Leases refuse it, so that two holders cannot both take one.
type UnconditionalUpdater interface {
	AllowUnconditionalUpdate() bool
}

// CountSpecChange sets obj's generation to old's plus one when spec and
// oldSpec (pointers to the two objects' specs) differ, as kube counts the
// spec changes of a resource in metadata.generation.
func CountSpecChange[S any](obj, old metav1.Object, spec, oldSpec *S) {
	if !apiequality.Semantic.DeepEqual(*spec, *oldSpec) {
		obj.SetGeneration(old.GetGeneration() + 1)
	}
}
