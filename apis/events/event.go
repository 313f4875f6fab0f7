// Package events holds the strategy of events.k8s.io/v1 events and their
// conversion to and from core/v1. Both APIs serve one resource, stored as
// core/v1 events, as in kube.
package events

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/apis/convert"
	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/registry"
)

// EventStrategy is the strategy of events.k8s.io/v1 events. Its methods take
// an *eventsv1.Event or the *corev1.Event it is stored as, so the Store may
// apply it before or after conversion. Errors name core/v1 fields
// (involvedObject, message...), as kube's do: kube validates after
// converting to its internal type, which has the core field names.
type EventStrategy struct{ core.EventCommon }

var (
	_ registry.Strategy                   = EventStrategy{}
	_ registry.CreateOnUpdater            = EventStrategy{}
	_ registry.FieldSelectable            = EventStrategy{}
	_ registry.GarbageCollectionDefaulter = EventStrategy{}
	_ registry.OwnCreateMetadata          = EventStrategy{}
	_ registry.InvalidKind                = EventStrategy{}
)

// ValidatesCreateMetadata: core.ValidateEvent validates the metadata after
// the rules of core/v1, as kube does.
func (EventStrategy) ValidatesCreateMetadata() {}

// InvalidKind is kube's: it validates events as its internal core Event.
func (EventStrategy) InvalidKind() schema.GroupKind { return schema.GroupKind{Kind: "Event"} }

// Validate applies the strict rules of events.k8s.io/v1 to a new event.
func (EventStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return core.ValidateEvent(asCore(obj), core.EventsV1EventRules)
}

// ValidateUpdate applies the strict rules of events.k8s.io/v1 to an update:
// everything but series is immutable.
func (EventStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return core.ValidateEventUpdate(asCore(obj), asCore(old), core.EventsV1EventRules)
}

// Fields returns the field selectors of events.k8s.io/v1.
func (EventStrategy) Fields(obj runtime.Object) fields.Set {
	coreFields := core.EventFields(asCore(obj))
	set := make(fields.Set, len(fieldLabels))
	for label, coreLabel := range fieldLabels {
		set[label] = coreFields[coreLabel]
	}
	return set
}

// fieldLabels maps the field selectors of events.k8s.io/v1 beyond metadata to
// the core/v1 selectors of the stored object.
var fieldLabels = map[string]string{
	"reason":                    "reason",
	"type":                      "type",
	"reportingController":       "reportingComponent",
	"regarding.kind":            "involvedObject.kind",
	"regarding.namespace":       "involvedObject.namespace",
	"regarding.name":            "involvedObject.name",
	"regarding.uid":             "involvedObject.uid",
	"regarding.apiVersion":      "involvedObject.apiVersion",
	"regarding.resourceVersion": "involvedObject.resourceVersion",
	"regarding.fieldPath":       "involvedObject.fieldPath",
}

// CoreFieldLabel translates a field selector of events.k8s.io/v1 into the
// core/v1 one that core.EventFields returns, for a Store that filters stored
// core/v1 events. metadata.name and metadata.namespace map to themselves.
func CoreFieldLabel(label string) (string, bool) {
	if label == "metadata.name" || label == "metadata.namespace" {
		return label, true
	}
	coreLabel, ok := fieldLabels[label]
	return coreLabel, ok
}

// asCore returns obj as a core/v1 event, converting an events.k8s.io/v1 one.
func asCore(obj runtime.Object) *corev1.Event {
	switch ev := obj.(type) {
	case *corev1.Event:
		return ev
	case *eventsv1.Event:
		out := &corev1.Event{}
		convert.ToCore(ev, out)
		return out
	default:
		panic(fmt.Sprintf("events: unexpected type %T", obj))
	}
}
