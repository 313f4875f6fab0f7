package core

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// EventRules selects the API whose rules an event is validated with. Both
// APIs store the same core/v1 object, and errors name its fields.
type EventRules int

const (
	// CoreV1EventRules are the rules of core/v1: lenient, for old clients.
	CoreV1EventRules EventRules = iota
	// EventsV1EventRules are the rules of events.k8s.io/v1: those of
	// core/v1 plus strict ones on create and immutability on update.
	EventsV1EventRules
)

// Length limits of event fields.
const (
	ReportingInstanceLengthLimit = 128
	ActionLengthLimit            = 128
	ReasonLengthLimit            = 128
	NoteLengthLimit              = 1024
)

// ValidateEvent validates a new event.
func ValidateEvent(ev *corev1.Event, rules EventRules) field.ErrorList {
	errs := validateEventCommon(ev, rules)
	if rules == CoreV1EventRules {
		return errs
	}
	errs = append(errs, apivalidation.ValidateObjectMeta(&ev.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
	errs = append(errs, validateEventSeries(ev)...)
	if ev.EventTime.IsZero() {
		errs = append(errs, field.Required(field.NewPath("eventTime"), ""))
	}
	if ev.Type != corev1.EventTypeNormal && ev.Type != corev1.EventTypeWarning {
		errs = append(errs, field.Invalid(field.NewPath("type"), "", fmt.Sprintf("has invalid value: %v", ev.Type)))
	}
	// The deprecated fields belong to core/v1 clients; events.k8s.io
	// clients report repetition through series.
	if !ev.FirstTimestamp.IsZero() {
		errs = append(errs, field.Invalid(field.NewPath("firstTimestamp"), "", "needs to be unset"))
	}
	if !ev.LastTimestamp.IsZero() {
		errs = append(errs, field.Invalid(field.NewPath("lastTimestamp"), "", "needs to be unset"))
	}
	if ev.Count != 0 {
		errs = append(errs, field.Invalid(field.NewPath("count"), "", "needs to be unset"))
	}
	if ev.Source.Component != "" || ev.Source.Host != "" {
		errs = append(errs, field.Invalid(field.NewPath("source"), "", "needs to be unset"))
	}
	return errs
}

// ValidateEventUpdate validates an updated event. Under the events.k8s.io/v1
// rules only series may change.
func ValidateEventUpdate(ev, old *corev1.Event, rules EventRules) field.ErrorList {
	errs := validateEventCommon(ev, rules)
	if rules == CoreV1EventRules {
		return errs
	}
	if !apiequality.Semantic.DeepEqual(ev.Series, old.Series) {
		errs = append(errs, validateEventSeries(ev)...)
	}
	immutable := func(newVal, oldVal any, name string) {
		errs = append(errs, apivalidation.ValidateImmutableField(newVal, oldVal, field.NewPath(name))...)
	}
	immutable(ev.InvolvedObject, old.InvolvedObject, "involvedObject")
	immutable(ev.Reason, old.Reason, "reason")
	immutable(ev.Message, old.Message, "message")
	immutable(ev.Source, old.Source, "source")
	immutable(ev.FirstTimestamp, old.FirstTimestamp, "firstTimestamp")
	immutable(ev.LastTimestamp, old.LastTimestamp, "lastTimestamp")
	immutable(ev.Count, old.Count, "count")
	// kube checks reason twice, so a changed reason yields two errors.
	immutable(ev.Reason, old.Reason, "reason")
	immutable(ev.Type, old.Type, "type")
	// Changes below a microsecond are tolerated: clients that serialize
	// MicroTime correctly truncate what the server returned.
	if !ev.EventTime.Truncate(time.Microsecond).Equal(old.EventTime.Truncate(time.Microsecond)) {
		immutable(ev.EventTime, old.EventTime, "eventTime")
	}
	immutable(ev.Action, old.Action, "action")
	immutable(ev.Related, old.Related, "related")
	immutable(ev.ReportingController, old.ReportingController, "reportingController")
	immutable(ev.ReportingInstance, old.ReportingInstance, "reportingInstance")
	return errs
}

// validateEventSeries checks a series: at least two occurrences, the last
// one timed.
func validateEventSeries(ev *corev1.Event) field.ErrorList {
	if ev.Series == nil {
		return nil
	}
	var errs field.ErrorList
	// kube names these paths with a dot inside one element.
	if ev.Series.Count < 2 {
		errs = append(errs, field.Invalid(field.NewPath("series.count"), "", "should be at least 2"))
	}
	if ev.Series.LastObservedTime.IsZero() {
		errs = append(errs, field.Required(field.NewPath("series.lastObservedTime"), ""))
	}
	return errs
}

// validateEventCommon holds the rules of every API. An event without
// eventTime comes from an old client and only needs its namespace to agree
// with the involved object; a new one must name its reporter and action.
func validateEventCommon(ev *corev1.Event, rules EventRules) field.ErrorList {
	nsPath := field.NewPath("involvedObject", "namespace")
	if ev.EventTime.IsZero() {
		// Old clients write events of cluster-scoped objects in "default".
		if ev.InvolvedObject.Namespace == "" {
			if ev.Namespace != metav1.NamespaceNone && ev.Namespace != metav1.NamespaceDefault {
				return field.ErrorList{field.Invalid(nsPath, ev.InvolvedObject.Namespace, "does not match event.namespace")}
			}
		} else if ev.Namespace != ev.InvolvedObject.Namespace {
			return field.ErrorList{field.Invalid(nsPath, ev.InvolvedObject.Namespace, "does not match event.namespace")}
		}
		return nil
	}

	var errs field.ErrorList
	if ev.InvolvedObject.Namespace == "" && ev.Namespace != metav1.NamespaceDefault && ev.Namespace != metav1.NamespaceSystem {
		errs = append(errs, field.Invalid(nsPath, ev.InvolvedObject.Namespace, "does not match event.namespace"))
	}
	controllerPath := field.NewPath("reportingController")
	if rules == CoreV1EventRules {
		controllerPath = field.NewPath("reportingComponent")
	}
	if ev.ReportingController == "" {
		errs = append(errs, field.Required(controllerPath, ""))
	}
	for _, msg := range validation.IsQualifiedName(ev.ReportingController) {
		errs = append(errs, field.Invalid(controllerPath, ev.ReportingController, msg))
	}
	errs = append(errs, requiredWithLimit(ev.ReportingInstance, "reportingInstance", ReportingInstanceLengthLimit, true)...)
	errs = append(errs, requiredWithLimit(ev.Action, "action", ActionLengthLimit, true)...)
	errs = append(errs, requiredWithLimit(ev.Reason, "reason", ReasonLengthLimit, true)...)
	errs = append(errs, requiredWithLimit(ev.Message, "message", NoteLengthLimit, false)...)
	return errs
}

// requiredWithLimit checks that a string field is set, if required, and not
// longer than limit bytes.
func requiredWithLimit(value, name string, limit int, required bool) field.ErrorList {
	var errs field.ErrorList
	if required && value == "" {
		errs = append(errs, field.Required(field.NewPath(name), ""))
	}
	if len(value) > limit {
		errs = append(errs, field.Invalid(field.NewPath(name), "", fmt.Sprintf("can have at most %v characters", limit)))
	}
	return errs
}
