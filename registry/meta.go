package registry

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/request"
	"github.com/capstan-io/capstan/warning"
)

// generatedSuffixLength is the length of the random suffix kube appends to
// generateName.
const generatedSuffixLength = 5

// beforeCreate fills the metadata the server owns, lets the strategy prepare
// the object and validates it. It is the create half of kube's rest.BeforeCreate.
func (s *Store) beforeCreate(ctx context.Context, obj runtime.Object) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if err := s.checkNamespace(ctx, m); err != nil {
		return err
	}
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	m.SetUID(uuid.NewUUID())
	m.SetCreationTimestamp(metav1.Now())
	m.SetResourceVersion("")
	m.SetSelfLink("")
	if m.GetGenerateName() != "" && m.GetName() == "" {
		m.SetName(generateName(m.GetGenerateName()))
	}
	s.strategy.PrepareForCreate(ctx, obj)
	var errs field.ErrorList
	if _, own := s.strategy.(OwnCreateMetadata); own {
		// kube's generic checks of the metadata (labels, annotations,
		// owners; a name that makes a path segment) come after the
		// strategy's, alone.
		if errs = s.strategy.Validate(ctx, obj); len(errs) == 0 {
			errs = apivalidation.ValidateObjectMetaAccessor(m, s.NamespaceScoped(), path.ValidatePathSegmentName, field.NewPath("metadata"))
		}
	} else {
		errs = append(s.validateMeta(m), s.strategy.Validate(ctx, obj)...)
	}
	if len(errs) > 0 {
		return s.invalid(obj, m.GetName(), errs)
	}
	if w, ok := s.strategy.(WarningsOnCreate); ok {
		addWarnings(ctx, w.WarningsOnCreate(ctx, obj))
	}
	s.canonicalize(obj)
	return nil
}

// beforeUpdate carries the server-owned metadata over from old, lets the
// strategy prepare the update and validates it.
func (s *Store) beforeUpdate(ctx context.Context, obj, old runtime.Object) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	oldMeta, _ := meta.Accessor(old)
	if err := s.checkNamespace(ctx, m); err != nil {
		return err
	}
	// A client cannot change these; kube resets them silently.
	m.SetCreationTimestamp(oldMeta.GetCreationTimestamp())
	// generation is the server's: strategies bump it from the old value
	// when the spec changes.
	m.SetGeneration(oldMeta.GetGeneration())
	m.SetDeletionTimestamp(oldMeta.GetDeletionTimestamp())
	m.SetDeletionGracePeriodSeconds(oldMeta.GetDeletionGracePeriodSeconds())
	if m.GetUID() == "" {
		m.SetUID(oldMeta.GetUID())
	}
	m.SetSelfLink("")
	if len(m.GetGenerateName()) == 0 {
		m.SetGenerateName(oldMeta.GetGenerateName())
	}
	s.strategy.PrepareForUpdate(ctx, obj, old)
	errs := apivalidation.ValidateObjectMetaAccessorUpdate(m, oldMeta, field.NewPath("metadata"))
	errs = append(errs, s.validateMeta(m)...)
	errs = append(errs, s.strategy.ValidateUpdate(ctx, obj, old)...)
	if len(errs) > 0 {
		return s.invalid(obj, m.GetName(), errs)
	}
	if w, ok := s.strategy.(WarningsOnUpdate); ok {
		addWarnings(ctx, w.WarningsOnUpdate(ctx, obj, old))
	}
	s.canonicalize(obj)
	return nil
}

// addWarnings sends a strategy's warnings to the client, after validation
// passed, as kube does.
func addWarnings(ctx context.Context, msgs []string) {
	for _, msg := range msgs {
		warning.Add(ctx, msg)
	}
}

func (s *Store) canonicalize(obj runtime.Object) {
	if c, ok := s.strategy.(Canonicalizer); ok {
		c.Canonicalize(obj)
	}
}

// checkNamespace makes the object's namespace agree with the request's.
func (s *Store) checkNamespace(ctx context.Context, m metav1.Object) error {
	ns := request.NamespaceFrom(ctx)
	if !s.NamespaceScoped() {
		// kube clears a namespace sent on a cluster-scoped object.
		m.SetNamespace("")
		return nil
	}
	if m.GetNamespace() == "" {
		m.SetNamespace(ns)
	} else if ns != "" && m.GetNamespace() != ns {
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

func (s *Store) validateMeta(m metav1.Object) field.ErrorList {
	nameFn := apivalidation.NameIsDNSSubdomain
	if nv, ok := s.strategy.(NameValidator); ok {
		nameFn = nv.ValidateName
	}
	return apivalidation.ValidateObjectMetaAccessor(m, s.NamespaceScoped(), nameFn, field.NewPath("metadata"))
}

// invalid is the 422 Invalid error for errs, with the kind of obj.
func (s *Store) invalid(obj runtime.Object, name string, errs field.ErrorList) error {
	kind := s.kind
	if gvk := obj.GetObjectKind().GroupVersionKind(); gvk.Kind != "" {
		kind = gvk.Kind
	}
	gk := schema.GroupKind{Group: s.resource.Group, Kind: kind}
	if ik, ok := s.strategy.(InvalidKind); ok {
		gk = ik.InvalidKind()
	}
	return apierrors.NewInvalid(gk, name, errs)
}

func generateName(base string) string {
	const maxNameLength = 63
	maxGeneratedNameLength := maxNameLength - generatedSuffixLength
	if len(base) > maxGeneratedNameLength {
		base = base[:maxGeneratedNameLength]
	}
	return fmt.Sprintf("%s%s", base, rand.String(generatedSuffixLength))
}
