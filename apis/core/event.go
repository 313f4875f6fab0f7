package core

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// EventStrategy is the strategy of the core/v1 events resource. It applies
// the lenient rules of core/v1; events.k8s.io/v1 requests, stored in the same
// resource, are validated by the events package with the strict rules.
type EventStrategy struct{ EventCommon }

var (
	_ registry.Strategy                   = EventStrategy{}
	_ registry.CreateOnUpdater            = EventStrategy{}
	_ registry.FieldSelectable            = EventStrategy{}
	_ registry.GarbageCollectionDefaulter = EventStrategy{}
	_ registry.OwnCreateMetadata          = EventStrategy{}
)

// ValidatesCreateMetadata: kube validates no metadata of a new core/v1
// event (the name must still make a storage key).
func (EventStrategy) ValidatesCreateMetadata() {}

// Validate validates a new event with the core/v1 rules.
func (EventStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return ValidateEvent(obj.(*corev1.Event), CoreV1EventRules)
}

// ValidateUpdate validates an updated event with the core/v1 rules, which
// allow any change.
func (EventStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateEventUpdate(obj.(*corev1.Event), old.(*corev1.Event), CoreV1EventRules)
}

// Fields returns the event field selectors of core/v1.
func (EventStrategy) Fields(obj runtime.Object) fields.Set {
	return EventFields(obj.(*corev1.Event))
}

// EventFields returns the selectable fields of a stored event under their
// core/v1 names. source falls back to the reporting controller so that
// selecting on source finds events written through events.k8s.io too.
func EventFields(ev *corev1.Event) fields.Set {
	source := ev.Source.Component
	if source == "" {
		source = ev.ReportingController
	}
	return fields.Set{
		"involvedObject.kind":            ev.InvolvedObject.Kind,
		"involvedObject.namespace":       ev.InvolvedObject.Namespace,
		"involvedObject.name":            ev.InvolvedObject.Name,
		"involvedObject.uid":             string(ev.InvolvedObject.UID),
		"involvedObject.apiVersion":      ev.InvolvedObject.APIVersion,
		"involvedObject.resourceVersion": ev.InvolvedObject.ResourceVersion,
		"involvedObject.fieldPath":       ev.InvolvedObject.FieldPath,
		"reason":                         ev.Reason,
		"reportingComponent":             ev.ReportingController,
		"source":                         source,
		"type":                           ev.Type,
	}
}

// EventCommon is what the strategies of core/v1 and events.k8s.io/v1
// events share: one stored resource, namespaced, without status, written
// by PUTs that may create, and outside garbage collection.
type EventCommon struct{}

// NamespaceScoped is true.
func (EventCommon) NamespaceScoped() bool { return true }

// AllowCreateOnUpdate is true: event recorders PUT events that may have
// expired from storage in the meantime.
func (EventCommon) AllowCreateOnUpdate() bool { return true }

// PrepareForCreate does nothing: an event has no status.
func (EventCommon) PrepareForCreate(context.Context, runtime.Object) {}

// PrepareForUpdate does nothing: an event has no status.
func (EventCommon) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

// DefaultGarbageCollectionPolicy is Unsupported: events take no part in
// garbage collection, so deletes never add its finalizers.
func (EventCommon) DefaultGarbageCollectionPolicy(context.Context) registry.GarbageCollectionPolicy {
	return registry.GarbageCollectionUnsupported
}
