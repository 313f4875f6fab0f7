package customresource

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	crschema "github.com/capstan-io/capstan/apiextensions/schema"
	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/registry"
)

// StatusStrategy is the strategy of the status subresource of custom
// resources: an update changes .status and nothing else.
type StatusStrategy struct {
	*Strategy
}

var _ registry.Strategy = (*StatusStrategy)(nil)

// PrepareForUpdate makes obj the old object with obj's status (none when
// obj has none) and obj's managed fields, which the handler recorded for
// this update. Labels, annotations, spec: all of them stay as they were.
func (s *StatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	u, oldU := obj.(*unstructured.Unstructured), old.(*unstructured.Unstructured)
	status, hasStatus := u.Object["status"]
	managedFields := u.GetManagedFields()
	// The Store has checked that both are at the same resourceVersion.
	u.Object = oldU.DeepCopy().Object
	u.SetManagedFields(managedFields)
	if hasStatus {
		u.Object["status"] = status
	} else {
		delete(u.Object, "status")
	}
}

// ValidateUpdate checks apiVersion and kind, the status against the
// schema of .status (with ratcheting), the scale subresource's status
// paths, list sets and maps (unless old already broke them) and the CEL
// rules of the whole object.
func (s *StatusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	// kube times the comparisons of old and new values; they are spread
	// through capstan's validation of an update, so it is timed whole.
	defer func(start time.Time) { metrics.CRDRatcheting(time.Since(start)) }(time.Now())
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return field.ErrorList{notUnstructured(obj)}
	}
	oldU, ok := old.(*unstructured.Unstructured)
	if !ok {
		return field.ErrorList{notUnstructured(old)}
	}
	errs := s.validateTypeMeta(u)
	var metaErrs field.ErrorList // for CEL's blocking check; the Store reports them
	if len(errs) == 0 {
		metaErrs = s.metaErrors(u, oldU)
		errs = append(errs, validateMetadataShape(u)...)
		if status, ok := u.Object["status"]; ok {
			errs = append(errs, s.statusValidator.ValidateUpdate(status, oldU.Object["status"], field.NewPath("status"))...)
		}
		errs = append(errs, s.validateScaleStatus(u)...)
	}
	if newErrs := crschema.ValidateListSetsAndMaps(nil, s.schema, u.Object); len(newErrs) > 0 &&
		len(crschema.ValidateListSetsAndMaps(nil, s.schema, oldU.Object)) == 0 {
		errs = append(errs, newErrs...)
	}
	return append(errs, s.validateCEL(ctx, hasBlockingErr(metaErrs) || hasBlockingErr(errs), u, oldU)...)
}

// WarningsOnUpdate is nothing: a status update cannot add finalizers.
func (s *StatusStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
