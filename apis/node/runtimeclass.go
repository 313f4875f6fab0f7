// Package node holds the strategy of node.k8s.io/v1 RuntimeClasses.
package node

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/registry"
)

// RuntimeClassStrategy is the strategy of the runtimeclasses resource.
type RuntimeClassStrategy struct{}

var (
	_ registry.Strategy             = RuntimeClassStrategy{}
	_ registry.CreateOnUpdater      = RuntimeClassStrategy{}
	_ registry.UnconditionalUpdater = RuntimeClassStrategy{}
	_ registry.WarningsOnCreate     = RuntimeClassStrategy{}
	_ registry.WarningsOnUpdate     = RuntimeClassStrategy{}
)

// NamespaceScoped is false: runtime classes are cluster scoped.
func (RuntimeClassStrategy) NamespaceScoped() bool { return false }

// AllowCreateOnUpdate is true, as in kube.
func (RuntimeClassStrategy) AllowCreateOnUpdate() bool { return true }

// AllowUnconditionalUpdate is false: an update must name the version it
// replaces, as in kube.
func (RuntimeClassStrategy) AllowUnconditionalUpdate() bool { return false }

// PrepareForCreate does nothing: a runtime class has no status.
func (RuntimeClassStrategy) PrepareForCreate(context.Context, runtime.Object) {}

// PrepareForUpdate does nothing: a runtime class has no status.
func (RuntimeClassStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

// Validate validates a new runtime class.
func (RuntimeClassStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return ValidateRuntimeClass(obj.(*nodev1.RuntimeClass))
}

// ValidateUpdate validates the new class; its handler is immutable.
func (RuntimeClassStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	rc, oldRC := obj.(*nodev1.RuntimeClass), old.(*nodev1.RuntimeClass)
	errs := ValidateRuntimeClass(rc)
	return append(errs, apivalidation.ValidateImmutableField(rc.Handler, oldRC.Handler, field.NewPath("handler"))...)
}

// ValidateRuntimeClass requires a DNS label handler and checks the overhead
// and scheduling constraints as a pod's.
func ValidateRuntimeClass(rc *nodev1.RuntimeClass) field.ErrorList {
	var errs field.ErrorList
	handler := field.NewPath("handler")
	if rc.Handler == "" {
		errs = append(errs, field.Required(handler, ""))
	}
	if rc.Handler != "" {
		for _, msg := range apivalidation.NameIsDNSLabel(rc.Handler, false) {
			errs = append(errs, field.Invalid(handler, rc.Handler, msg))
		}
	}
	if rc.Overhead != nil {
		errs = append(errs, core.ValidateOverhead(rc.Overhead.PodFixed, field.NewPath("overhead"))...)
	}
	if s := rc.Scheduling; s != nil {
		path := field.NewPath("scheduling")
		errs = append(errs, metavalidation.ValidateLabels(s.NodeSelector, path.Child("nodeSelector"))...)
		errs = append(errs, validateTolerations(s.Tolerations, path.Child("tolerations"))...)
	}
	return errs
}

// validateTolerations checks each toleration and that none repeats.
func validateTolerations(tolerations []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	errs := core.ValidateTolerations(tolerations, fldPath)
	seen := map[corev1.Toleration]bool{}
	for i, t := range tolerations {
		key := corev1.Toleration{Key: t.Key, Operator: t.Operator, Value: t.Value, Effect: t.Effect}
		if seen[key] {
			errs = append(errs, field.Duplicate(fldPath.Index(i), t))
		}
		seen[key] = true
	}
	return errs
}

// deprecatedNodeLabels are the node labels kube warns of in node selectors.
var deprecatedNodeLabels = map[string]string{
	`beta.kubernetes.io/arch`:                       `deprecated since v1.14; use "kubernetes.io/arch" instead`,
	`beta.kubernetes.io/os`:                         `deprecated since v1.14; use "kubernetes.io/os" instead`,
	`failure-domain.beta.kubernetes.io/region`:      `deprecated since v1.17; use "topology.kubernetes.io/region" instead`,
	`failure-domain.beta.kubernetes.io/zone`:        `deprecated since v1.17; use "topology.kubernetes.io/zone" instead`,
	`beta.kubernetes.io/instance-type`:              `deprecated since v1.17; use "node.kubernetes.io/instance-type" instead`,
	`app.kubernetes.io/created-by`:                  `deprecated since v1.9`,
	`scheduler.alpha.kubernetes.io/preferAvoidPods`: `deprecated since v1.22; use Taints and Tolerations instead`,
	`node-role.kubernetes.io/master`:                `use "node-role.kubernetes.io/control-plane" instead`,
}

// WarningsOnCreate warns of deprecated node labels in the node selector.
func (RuntimeClassStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return runtimeClassWarnings(obj.(*nodev1.RuntimeClass))
}

// WarningsOnUpdate is WarningsOnCreate.
func (RuntimeClassStrategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return runtimeClassWarnings(obj.(*nodev1.RuntimeClass))
}

func runtimeClassWarnings(rc *nodev1.RuntimeClass) []string {
	if rc.Scheduling == nil {
		return nil
	}
	var out []string
	for key := range rc.Scheduling.NodeSelector {
		if msg, ok := deprecatedNodeLabels[key]; ok {
			out = append(out, fmt.Sprintf("scheduling.nodeSelector: %s", msg))
		}
	}
	return out
}
