// Package flowcontrol holds the strategies of flowcontrol.apiserver.k8s.io/v1
// FlowSchemas and PriorityLevelConfigurations: kube's defaults, validation
// and status rules. The dispatcher that reads them lives elsewhere.
package flowcontrol

import (
	"context"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// kube's v1 defaults.
const (
	DefaultMatchingPrecedence       int32 = 1000
	DefaultNominalConcurrencyShares int32 = 30
	DefaultQueues                   int32 = 64
	DefaultHandSize                 int32 = 8
	DefaultQueueLengthLimit         int32 = 50
)

// FlowSchemaStrategy is the strategy of flowschemas.
type FlowSchemaStrategy struct{}

var (
	_ registry.Strategy  = FlowSchemaStrategy{}
	_ registry.Defaulter = FlowSchemaStrategy{}
)

// NamespaceScoped is false.
func (FlowSchemaStrategy) NamespaceScoped() bool { return false }

// Default sets matchingPrecedence 1000 when it is 0.
func (FlowSchemaStrategy) Default(obj runtime.Object) {
	DefaultFlowSchema(obj.(*flowcontrolv1.FlowSchema))
}

// DefaultFlowSchema applies kube's v1 defaults to fs.
func DefaultFlowSchema(fs *flowcontrolv1.FlowSchema) {
	if fs.Spec.MatchingPrecedence == 0 {
		fs.Spec.MatchingPrecedence = DefaultMatchingPrecedence
	}
}

// PrepareForCreate clears the status and starts the generation at 1.
func (FlowSchemaStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	fs := obj.(*flowcontrolv1.FlowSchema)
	fs.Status = flowcontrolv1.FlowSchemaStatus{}
	fs.Generation = 1
}

// PrepareForUpdate keeps the status and bumps the generation on a spec change.
func (FlowSchemaStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	fs, oldFS := obj.(*flowcontrolv1.FlowSchema), old.(*flowcontrolv1.FlowSchema)
	registry.CountSpecChange(fs, oldFS, &fs.Spec, &oldFS.Spec)
	fs.Status = oldFS.Status
}

// Validate validates a new flow schema.
func (FlowSchemaStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return ValidateFlowSchema(obj.(*flowcontrolv1.FlowSchema))
}

// ValidateUpdate validates an updated flow schema as a new one: nothing
// is immutable.
func (FlowSchemaStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return ValidateFlowSchema(obj.(*flowcontrolv1.FlowSchema))
}

// FlowSchemaStatusStrategy is the strategy of flowschemas/status: only the
// status changes; metadata but managedFields stays as it was.
type FlowSchemaStatusStrategy struct{ FlowSchemaStrategy }

// PrepareForUpdate keeps old's spec and metadata.
func (FlowSchemaStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	fs, oldFS := obj.(*flowcontrolv1.FlowSchema), old.(*flowcontrolv1.FlowSchema)
	managed := fs.ManagedFields
	fs.ObjectMeta = *oldFS.ObjectMeta.DeepCopy()
	fs.ManagedFields = managed
	fs.Spec = oldFS.Spec
}

// ValidateUpdate validates the status alone.
func (FlowSchemaStatusStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	fs := obj.(*flowcontrolv1.FlowSchema)
	return validateConditionTypes(flowSchemaConditionTypes(fs.Status.Conditions), field.NewPath("status", "conditions"))
}

// PriorityLevelStrategy is the strategy of prioritylevelconfigurations.
type PriorityLevelStrategy struct{}

var (
	_ registry.Strategy  = PriorityLevelStrategy{}
	_ registry.Defaulter = PriorityLevelStrategy{}
)

// NamespaceScoped is false.
func (PriorityLevelStrategy) NamespaceScoped() bool { return false }

// Default applies kube's v1 defaults.
func (PriorityLevelStrategy) Default(obj runtime.Object) {
	DefaultPriorityLevel(obj.(*flowcontrolv1.PriorityLevelConfiguration))
}

// DefaultPriorityLevel applies kube's v1 defaults to pl: 30 nominal shares
// and 0% lendable for a limited level, 64 queues of 50 with hands of 8 for
// queuing, 0 shares and 0% lendable for an exempt one.
func DefaultPriorityLevel(pl *flowcontrolv1.PriorityLevelConfiguration) {
	if l := pl.Spec.Limited; l != nil {
		setIfNil(&l.NominalConcurrencyShares, DefaultNominalConcurrencyShares)
		setIfNil(&l.LendablePercent, 0)
		if q := l.LimitResponse.Queuing; q != nil {
			setIfZero(&q.HandSize, DefaultHandSize)
			setIfZero(&q.Queues, DefaultQueues)
			setIfZero(&q.QueueLengthLimit, DefaultQueueLengthLimit)
		}
	}
	if e := pl.Spec.Exempt; e != nil {
		setIfNil(&e.NominalConcurrencyShares, 0)
		setIfNil(&e.LendablePercent, 0)
	}
}

func setIfNil(p **int32, v int32) {
	if *p == nil {
		*p = &v
	}
}

func setIfZero(p *int32, v int32) {
	if *p == 0 {
		*p = v
	}
}

// PrepareForCreate clears the status and starts the generation at 1.
func (PriorityLevelStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	pl := obj.(*flowcontrolv1.PriorityLevelConfiguration)
	pl.Status = flowcontrolv1.PriorityLevelConfigurationStatus{}
	pl.Generation = 1
}

// PrepareForUpdate keeps the status and bumps the generation on a spec change.
func (PriorityLevelStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	pl, oldPL := obj.(*flowcontrolv1.PriorityLevelConfiguration), old.(*flowcontrolv1.PriorityLevelConfiguration)
	registry.CountSpecChange(pl, oldPL, &pl.Spec, &oldPL.Spec)
	pl.Status = oldPL.Status
}

// Validate validates a new priority level.
func (PriorityLevelStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return ValidatePriorityLevel(obj.(*flowcontrolv1.PriorityLevelConfiguration), nil)
}

// ValidateUpdate validates an updated priority level as a new one, but
// for the declarative checks of parts that did not change.
func (PriorityLevelStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidatePriorityLevel(obj.(*flowcontrolv1.PriorityLevelConfiguration), old.(*flowcontrolv1.PriorityLevelConfiguration))
}

// PriorityLevelStatusStrategy is the strategy of
// prioritylevelconfigurations/status.
type PriorityLevelStatusStrategy struct{ PriorityLevelStrategy }

// PrepareForUpdate keeps old's spec and metadata.
func (PriorityLevelStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	pl, oldPL := obj.(*flowcontrolv1.PriorityLevelConfiguration), old.(*flowcontrolv1.PriorityLevelConfiguration)
	managed := pl.ManagedFields
	pl.ObjectMeta = *oldPL.ObjectMeta.DeepCopy()
	pl.ManagedFields = managed
	pl.Spec = oldPL.Spec
}

// ValidateUpdate validates the status alone.
func (PriorityLevelStatusStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	pl := obj.(*flowcontrolv1.PriorityLevelConfiguration)
	return validateConditionTypes(levelConditionTypes(pl.Status.Conditions), field.NewPath("status", "conditions"))
}
