// Package scheduling holds the strategy of scheduling.k8s.io/v1
// PriorityClasses and the system priority classes every cluster has.
package scheduling

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/registry"
)

// Priority bounds and the reserved names, as kube defines them.
const (
	// HighestUserDefinablePriority is the highest value a class not
	// reserved for the system may have.
	HighestUserDefinablePriority = int32(1000000000)
	// SystemCriticalPriority is the value of system-cluster-critical.
	SystemCriticalPriority = 2 * HighestUserDefinablePriority
	// SystemPriorityClassPrefix starts the names reserved for the system.
	SystemPriorityClassPrefix = "system-"
	// SystemClusterCritical and SystemNodeCritical are the system classes.
	SystemClusterCritical = SystemPriorityClassPrefix + "cluster-critical"
	SystemNodeCritical    = SystemPriorityClassPrefix + "node-critical"
)

// SystemPriorityClasses returns the classes created at start, as kube
// creates them.
func SystemPriorityClasses() []*schedulingv1.PriorityClass {
	return []*schedulingv1.PriorityClass{
		{ObjectMeta: metav1.ObjectMeta{Name: SystemNodeCritical}, Value: SystemCriticalPriority + 1000,
			Description: "Used for system critical pods that must not be moved from their current node."},
		{ObjectMeta: metav1.ObjectMeta{Name: SystemClusterCritical}, Value: SystemCriticalPriority,
			Description: "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."},
	}
}

// knownSystemClass reports whether name, value and globalDefault are those
// of a system class, and if not why.
func knownSystemClass(name string, value int32, globalDefault bool) error {
	for _, c := range SystemPriorityClasses() {
		if c.Name != name {
			continue
		}
		if c.Value != value {
			return fmt.Errorf("value of %v PriorityClass must be %v", c.Name, c.Value)
		}
		if c.GlobalDefault != globalDefault {
			return fmt.Errorf("globalDefault of %v PriorityClass must be %v", c.Name, c.GlobalDefault)
		}
		return nil
	}
	return fmt.Errorf("%v is not a known system priority class", name)
}

// PriorityClassStrategy is the strategy of the priorityclasses resource.
type PriorityClassStrategy struct{}

var (
	_ registry.Strategy  = PriorityClassStrategy{}
	_ registry.Defaulter = PriorityClassStrategy{}
)

// NamespaceScoped is false: priority classes are cluster scoped.
func (PriorityClassStrategy) NamespaceScoped() bool { return false }

// Default sets the PreemptLowerPriority preemption policy.
func (PriorityClassStrategy) Default(obj runtime.Object) {
	pc := obj.(*schedulingv1.PriorityClass)
	if pc.PreemptionPolicy == nil {
		p := corev1.PreemptLowerPriority
		pc.PreemptionPolicy = &p
	}
}

// PrepareForCreate sets generation 1.
func (PriorityClassStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*schedulingv1.PriorityClass).Generation = 1
}

// PrepareForUpdate does nothing: a priority class has no status, and kube
// does not bump its generation.
func (PriorityClassStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

// Validate validates a new priority class: system- names are reserved to
// the system classes, other classes are bounded.
func (PriorityClassStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return ValidatePriorityClass(obj.(*schedulingv1.PriorityClass))
}

// ValidateUpdate refuses changes of the value and the preemption policy.
// As in kube, the rules of Validate do not apply again.
func (PriorityClassStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidatePriorityClassUpdate(obj.(*schedulingv1.PriorityClass), old.(*schedulingv1.PriorityClass))
}

// ValidatePriorityClass validates a priority class beyond its metadata.
func ValidatePriorityClass(pc *schedulingv1.PriorityClass) field.ErrorList {
	var errs field.ErrorList
	if strings.HasPrefix(pc.Name, SystemPriorityClassPrefix) {
		if err := knownSystemClass(pc.Name, pc.Value, pc.GlobalDefault); err != nil {
			errs = append(errs, field.Forbidden(field.NewPath("metadata", "name"),
				"priority class names with '"+SystemPriorityClassPrefix+"' prefix are reserved for system use only. error: "+err.Error()))
		}
	} else if pc.Value > HighestUserDefinablePriority {
		errs = append(errs, field.Forbidden(field.NewPath("value"),
			fmt.Sprintf("maximum allowed value of a user defined priority is %v", HighestUserDefinablePriority)))
	}
	if pc.PreemptionPolicy != nil {
		errs = append(errs, core.ValidatePreemptionPolicy(pc.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
	}
	return errs
}

// ValidatePriorityClassUpdate: value and preemptionPolicy are immutable.
func ValidatePriorityClassUpdate(pc, old *schedulingv1.PriorityClass) field.ErrorList {
	var errs field.ErrorList
	if pc.Value != old.Value {
		errs = append(errs, field.Forbidden(field.NewPath("value"), "may not be changed in an update."))
	}
	return append(errs, apivalidation.ValidateImmutableField(pc.PreemptionPolicy, old.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
}
