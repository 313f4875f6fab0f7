package storage

import (
	"context"
	"math"

	storagev1 "k8s.io/api/storage/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/registry"
)

// kube's bounds on an attachment's status.
const (
	maxAttachmentMetadataSize = 256 * (1 << 10)
	maxVolumeErrorMessageSize = 1024
)

// VolumeAttachmentStrategy is the strategy of the cluster-scoped
// volumeattachments resource.
type VolumeAttachmentStrategy struct{}

var (
	_ registry.Strategy             = VolumeAttachmentStrategy{}
	_ registry.UnconditionalUpdater = VolumeAttachmentStrategy{}
)

// NamespaceScoped is false.
func (VolumeAttachmentStrategy) NamespaceScoped() bool { return false }

// AllowUnconditionalUpdate is false, as in kube.
func (VolumeAttachmentStrategy) AllowUnconditionalUpdate() bool { return false }

// PrepareForCreate clears the status.
func (VolumeAttachmentStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*storagev1.VolumeAttachment).Status = storagev1.VolumeAttachmentStatus{}
}

// PrepareForUpdate keeps the status.
func (VolumeAttachmentStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*storagev1.VolumeAttachment).Status = old.(*storagev1.VolumeAttachment).Status
}

// Validate validates a new attachment.
func (VolumeAttachmentStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return ValidateVolumeAttachment(obj.(*storagev1.VolumeAttachment))
}

// ValidateUpdate validates an update: the spec (attacher, source, node) is
// immutable.
func (VolumeAttachmentStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	va, oldVA := obj.(*storagev1.VolumeAttachment), old.(*storagev1.VolumeAttachment)
	errs := ValidateVolumeAttachment(va)
	return append(errs, apivalidation.ValidateImmutableField(va.Spec, oldVA.Spec, field.NewPath("spec"))...)
}

// VolumeAttachmentStatusStrategy is the strategy of
// volumeattachments/status.
type VolumeAttachmentStatusStrategy struct{ VolumeAttachmentStrategy }

// PrepareForUpdate keeps the spec and the metadata of old.
func (VolumeAttachmentStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	va, oldVA := obj.(*storagev1.VolumeAttachment), old.(*storagev1.VolumeAttachment)
	va.Spec = oldVA.Spec
	metav1.ResetObjectMetaForStatus(&va.ObjectMeta, &oldVA.ObjectMeta)
}

// ValidateVolumeAttachment validates an attachment: a CSI attacher, exactly
// one source, a node name, and bounded status metadata and errors.
func ValidateVolumeAttachment(va *storagev1.VolumeAttachment) field.ErrorList {
	specPath := field.NewPath("spec")
	errs := validateAttachmentSource(&va.Spec.Source, specPath.Child("source"))
	for _, msg := range apivalidation.NameIsDNSSubdomain(va.Spec.NodeName, false) {
		errs = append(errs, field.Invalid(specPath.Child("nodeName"), va.Spec.NodeName, msg))
	}
	statusPath := field.NewPath("status")
	size := 0
	for k, v := range va.Status.AttachmentMetadata {
		size += len(k) + len(v)
	}
	if size > maxAttachmentMetadataSize {
		errs = append(errs, field.TooLong(statusPath.Child("attachmentMetadata"), "", maxAttachmentMetadataSize))
	}
	errs = append(errs, validateVolumeError(va.Status.AttachError, statusPath.Child("attachError"))...)
	errs = append(errs, validateVolumeError(va.Status.DetachError, statusPath.Child("detachError"))...)
	if pv := va.Spec.Source.PersistentVolumeName; pv != nil {
		// kube's path is one element with dots.
		for _, msg := range apivalidation.NameIsDNSSubdomain(*pv, false) {
			errs = append(errs, field.Invalid(field.NewPath("spec.source.persistentVolumeName"), *pv, msg))
		}
	}
	// kube checks the attacher declaratively: its errors come last.
	return append(errs, core.ValidateCSIDriverName(va.Spec.Attacher, specPath.Child("attacher"))...)
}

func validateAttachmentSource(s *storagev1.VolumeAttachmentSource, fldPath *field.Path) field.ErrorList {
	const exactlyOne = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"
	switch {
	case s.InlineVolumeSpec == nil && s.PersistentVolumeName == nil:
		return field.ErrorList{field.Required(fldPath, exactlyOne)}
	case s.InlineVolumeSpec != nil && s.PersistentVolumeName != nil:
		return field.ErrorList{field.Forbidden(fldPath, exactlyOne)}
	case s.PersistentVolumeName != nil:
		if *s.PersistentVolumeName == "" {
			return field.ErrorList{field.Required(fldPath.Child("persistentVolumeName"), "must specify non empty persistentVolumeName")}
		}
		return nil
	}
	return core.ValidateInlinePersistentVolumeSpec(s.InlineVolumeSpec, fldPath.Child("inlineVolumeSpec"))
}

func validateVolumeError(e *storagev1.VolumeError, fldPath *field.Path) field.ErrorList {
	if e == nil {
		return nil
	}
	var errs field.ErrorList
	if len(e.Message) > maxVolumeErrorMessageSize {
		errs = append(errs, field.TooLong(fldPath.Child("message"), "", maxVolumeErrorMessageSize))
	}
	if c := e.ErrorCode; c != nil && *c < 0 {
		errs = append(errs, field.Invalid(fldPath.Child("errorCode"), *c, validation.InclusiveRangeError(0, math.MaxInt32)))
	}
	return errs
}
