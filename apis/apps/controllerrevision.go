package apps

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// ControllerRevisionStrategy is the strategy of the controllerrevisions
// resource: immutable snapshots of a controller's template.
type ControllerRevisionStrategy struct{}

var _ registry.Strategy = ControllerRevisionStrategy{}

// NamespaceScoped is true.
func (ControllerRevisionStrategy) NamespaceScoped() bool { return true }

// PrepareForCreate does nothing: a revision has no status.
func (ControllerRevisionStrategy) PrepareForCreate(context.Context, runtime.Object) {}

// PrepareForUpdate does nothing: a revision has no status.
func (ControllerRevisionStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

// Validate validates a new revision.
func (ControllerRevisionStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return ValidateControllerRevision(obj.(*appsv1.ControllerRevision))
}

// ValidateUpdate validates an updated revision; its data may not change.
func (ControllerRevisionStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateControllerRevisionUpdate(obj.(*appsv1.ControllerRevision), old.(*appsv1.ControllerRevision))
}

// ValidateControllerRevision requires a non-negative revision and data that
// is a JSON object.
func ValidateControllerRevision(rev *appsv1.ControllerRevision) field.ErrorList {
	errs := nonNegative(rev.Revision, field.NewPath("revision"))
	dataPath := field.NewPath("data")
	raw := revisionData(rev)
	if raw == nil {
		return append(errs, field.Required(dataPath, "data is mandatory"))
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return append(errs, field.Invalid(dataPath, "<value omitted>", fmt.Sprintf("error parsing data: %v", err.Error())))
	}
	switch v.(type) {
	case nil:
		errs = append(errs, field.Required(dataPath, "data is mandatory"))
	case map[string]any:
	default:
		errs = append(errs, field.Required(dataPath, "data must be a valid JSON object"))
	}
	return errs
}

// ValidateControllerRevisionUpdate requires a non-negative revision and the
// data of old. Data that differs from old only in JSON whitespace counts as
// unchanged.
func ValidateControllerRevisionUpdate(rev, old *appsv1.ControllerRevision) field.ErrorList {
	errs := nonNegative(rev.Revision, field.NewPath("revision"))
	if !sameJSON(revisionData(rev), revisionData(old)) {
		errs = append(errs, field.Invalid(field.NewPath("data"), rev.Data, "field is immutable"))
	}
	return errs
}

// revisionData returns the JSON of a revision's data, encoding Object when
// the data was set as a Go value rather than decoded.
func revisionData(rev *appsv1.ControllerRevision) []byte {
	if rev.Data.Raw != nil || rev.Data.Object == nil {
		return rev.Data.Raw
	}
	raw, err := json.Marshal(rev.Data.Object)
	if err != nil {
		return nil
	}
	return raw
}

func sameJSON(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return false
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}
