package printers

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/apis/convert"
	"github.com/capstan-io/capstan/registry/rest"
)

// eventsConvertors print events.k8s.io/v1 Events as the core/v1 Events
// they are.
var eventsConvertors = map[schema.GroupVersionKind]rest.TableConvertor{
	eventsv1.SchemeGroupVersion.WithKind("Event"): New(eventColumns, func(e *eventsv1.Event, now time.Time) (metav1.TableRow, error) {
		var core corev1.Event
		convert.ToCore(e, &core)
		return eventRow(&core, now)
	}),
}

var eventColumns = []metav1.TableColumnDefinition{
	column("Last Seen", "string", corev1.Event{}.SwaggerDoc()["lastTimestamp"]),
	column("Type", "string", corev1.Event{}.SwaggerDoc()["type"]),
	column("Reason", "string", corev1.Event{}.SwaggerDoc()["reason"]),
	column("Object", "string", corev1.Event{}.SwaggerDoc()["involvedObject"]),
	wideColumn("Subobject", "string", corev1.ObjectReference{}.SwaggerDoc()["fieldPath"]),
	wideColumn("Source", "string", corev1.Event{}.SwaggerDoc()["source"]),
	column("Message", "string", corev1.Event{}.SwaggerDoc()["message"]),
	wideColumn("First Seen", "string", corev1.Event{}.SwaggerDoc()["firstTimestamp"]),
	wideColumn("Count", "string", corev1.Event{}.SwaggerDoc()["count"]),
	wide(nameColumn()),
}

// eventRow prints an event of either API: the series, eventTime and
// reporting fields of events.k8s.io stand in for the ones of core/v1 it
// leaves empty.
func eventRow(e *corev1.Event, now time.Time) (metav1.TableRow, error) {
	first := since(e.FirstTimestamp, now)
	if e.FirstTimestamp.IsZero() {
		first = sinceMicro(e.EventTime, now)
	}
	last := since(e.LastTimestamp, now)
	if e.LastTimestamp.IsZero() {
		last = first
	}
	count := e.Count
	if e.Series != nil {
		last, count = sinceMicro(e.Series.LastObservedTime, now), e.Series.Count
	} else if count == 0 {
		count = 1 // a singleton event of events.k8s.io has no count
	}
	object := strings.ToLower(e.InvolvedObject.Kind)
	if e.InvolvedObject.Name != "" {
		object = fmt.Sprintf("%s/%s", object, e.InvolvedObject.Name)
	}
	return rowOf(last, e.Type, e.Reason, object, e.InvolvedObject.FieldPath, eventSource(e), strings.TrimSpace(e.Message),
		first, int64(count), e.Name)
}

// eventSource is "component, host", from the source or else the reporting
// controller and instance.
func eventSource(e *corev1.Event) string {
	component, host := e.Source.Component, e.Source.Host
	if component == "" {
		component = e.ReportingController
	}
	if host == "" {
		host = e.ReportingInstance
	}
	if host == "" {
		return component
	}
	return component + ", " + host
}
