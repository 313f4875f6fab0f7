// Package admissionregistration holds the strategies of the
// admissionregistration.k8s.io/v1 resources: webhook configurations and
// admission policies with their bindings. kube's defaults and validation,
// with the CEL expressions compiled and type-checked at write.
package admissionregistration

import (
	"context"
	"fmt"
	"strings"

	arv1 "k8s.io/api/admissionregistration/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// Strategy is the strategy of one admissionregistration kind; the
// differences between kinds are its kind's functions.
type Strategy[T runtime.Object] struct {
	kind[T]
}

// kind is what differs between the kinds.
type kind[T runtime.Object] struct {
	// spec is what bumps the generation when it changes.
	spec func(T) any
	// resetStatus clears (create) or keeps (update) the status, if any.
	resetStatus func(obj, old T)
	defaults    func(T)
	// validate validates obj, an update of old when old is not nil.
	validate func(ctx context.Context, obj, old T) field.ErrorList
	warnings func(T) []string
}

var (
	_ registry.Strategy             = Strategy[*arv1.ValidatingWebhookConfiguration]{}
	_ registry.Defaulter            = Strategy[*arv1.ValidatingWebhookConfiguration]{}
	_ registry.UnconditionalUpdater = Strategy[*arv1.ValidatingWebhookConfiguration]{}
	_ registry.WarningsOnCreate     = Strategy[*arv1.ValidatingWebhookConfiguration]{}
	_ registry.WarningsOnUpdate     = Strategy[*arv1.ValidatingWebhookConfiguration]{}
)

// NamespaceScoped is false: every kind of the group is cluster scoped.
func (Strategy[T]) NamespaceScoped() bool { return false }

// AllowUnconditionalUpdate is false: an update names the version it
// replaces, as in kube.
func (Strategy[T]) AllowUnconditionalUpdate() bool { return false }

// Default applies kube's v1 defaults.
func (s Strategy[T]) Default(obj runtime.Object) {
	if s.defaults != nil {
		s.defaults(obj.(T))
	}
}

// PrepareForCreate starts the generation at 1 and clears the status.
func (s Strategy[T]) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(metav1.Object).SetGeneration(1)
	if s.resetStatus != nil {
		var none T
		s.resetStatus(obj.(T), none)
	}
}

// PrepareForUpdate keeps the status and bumps the generation on a change.
func (s Strategy[T]) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	o, prev := obj.(T), old.(T)
	if s.resetStatus != nil {
		s.resetStatus(o, prev)
	}
	if !apiequality.Semantic.DeepEqual(s.spec(o), s.spec(prev)) {
		obj.(metav1.Object).SetGeneration(old.(metav1.Object).GetGeneration() + 1)
	}
}

// Validate validates a new object; a name with the static suffix is
// refused, as kube reserves it for manifest-based configurations.
func (s Strategy[T]) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	var none T
	errs := s.validate(ctx, obj.(T), none)
	return append(errs, validateStaticSuffix(obj.(metav1.Object).GetName())...)
}

// ValidateUpdate validates an update.
func (s Strategy[T]) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return s.validate(ctx, obj.(T), old.(T))
}

// WarningsOnCreate warns of rules naming resources webhooks never see.
func (s Strategy[T]) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	if s.warnings == nil {
		return nil
	}
	return s.warnings(obj.(T))
}

// WarningsOnUpdate warns as WarningsOnCreate and of a static name.
func (s Strategy[T]) WarningsOnUpdate(ctx context.Context, obj, _ runtime.Object) []string {
	return append(staticSuffixWarnings(obj.(metav1.Object).GetName()), s.WarningsOnCreate(ctx, obj)...)
}

// staticSuffix is kube's reserved suffix of manifest-based configurations.
const staticSuffix = ".static.k8s.io"

func staticSuffixMessage() string {
	return fmt.Sprintf("names ending with %q are reserved for static manifest-based configurations and cannot be managed via the API", staticSuffix)
}

func validateStaticSuffix(name string) field.ErrorList {
	if !strings.HasSuffix(name, staticSuffix) {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), name, staticSuffixMessage())}
}

func staticSuffixWarnings(name string) []string {
	if !strings.HasSuffix(name, staticSuffix) {
		return nil
	}
	return []string{"metadata.name: " + staticSuffixMessage()}
}
