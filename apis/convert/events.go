// Package convert holds the conversions between group versions that
// k8s.io/api does not register (kube keeps them in its internal packages),
// added to the scheme so that storage and handlers convert through it.
package convert

import (
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
)

// ToCore converts an events.k8s.io/v1 event to the core/v1 event it is stored
// as. The fields the two share keep their names; the deprecated fields of
// events.k8s.io/v1 are the first-class fields of core/v1. TypeMeta is left to
// the caller. out shares no memory with in.
func ToCore(in *eventsv1.Event, out *corev1.Event) {
	in = in.DeepCopy()
	out.ObjectMeta = in.ObjectMeta
	out.InvolvedObject = in.Regarding
	out.Related = in.Related
	out.Reason = in.Reason
	out.Message = in.Note
	out.Type = in.Type
	out.Action = in.Action
	out.EventTime = in.EventTime
	out.ReportingController = in.ReportingController
	out.ReportingInstance = in.ReportingInstance
	out.Source = in.DeprecatedSource
	out.FirstTimestamp = in.DeprecatedFirstTimestamp
	out.LastTimestamp = in.DeprecatedLastTimestamp
	out.Count = in.DeprecatedCount
	out.Series = nil
	if in.Series != nil {
		out.Series = &corev1.EventSeries{Count: in.Series.Count, LastObservedTime: in.Series.LastObservedTime}
	}
}

// FromCore converts a stored core/v1 event to events.k8s.io/v1, the inverse
// of ToCore. out shares no memory with in.
func FromCore(in *corev1.Event, out *eventsv1.Event) {
	in = in.DeepCopy()
	out.ObjectMeta = in.ObjectMeta
	out.Regarding = in.InvolvedObject
	out.Related = in.Related
	out.Reason = in.Reason
	out.Note = in.Message
	out.Type = in.Type
	out.Action = in.Action
	out.EventTime = in.EventTime
	out.ReportingController = in.ReportingController
	out.ReportingInstance = in.ReportingInstance
	out.DeprecatedSource = in.Source
	out.DeprecatedFirstTimestamp = in.FirstTimestamp
	out.DeprecatedLastTimestamp = in.LastTimestamp
	out.DeprecatedCount = in.Count
	out.Series = nil
	if in.Series != nil {
		out.Series = &eventsv1.EventSeries{Count: in.Series.Count, LastObservedTime: in.Series.LastObservedTime}
	}
}

// ListToCore converts a list with ToCore.
func ListToCore(in *eventsv1.EventList, out *corev1.EventList) {
	out.ListMeta = *in.ListMeta.DeepCopy()
	out.Items = nil
	if in.Items != nil {
		out.Items = make([]corev1.Event, len(in.Items))
		for i := range in.Items {
			ToCore(&in.Items[i], &out.Items[i])
		}
	}
}

// ListFromCore converts a list with FromCore.
func ListFromCore(in *corev1.EventList, out *eventsv1.EventList) {
	out.ListMeta = *in.ListMeta.DeepCopy()
	out.Items = nil
	if in.Items != nil {
		out.Items = make([]eventsv1.Event, len(in.Items))
		for i := range in.Items {
			FromCore(&in.Items[i], &out.Items[i])
		}
	}
}

// AddConversionFuncs registers the four conversions in s, so that
// s.Convert moves events between the two group versions. k8s.io/api
// registers none: kube's live in its internal packages.
func AddConversionFuncs(s *runtime.Scheme) error {
	if err := s.AddConversionFunc((*eventsv1.Event)(nil), (*corev1.Event)(nil), func(a, b any, _ conversion.Scope) error {
		ToCore(a.(*eventsv1.Event), b.(*corev1.Event))
		return nil
	}); err != nil {
		return err
	}
	if err := s.AddConversionFunc((*corev1.Event)(nil), (*eventsv1.Event)(nil), func(a, b any, _ conversion.Scope) error {
		FromCore(a.(*corev1.Event), b.(*eventsv1.Event))
		return nil
	}); err != nil {
		return err
	}
	if err := s.AddConversionFunc((*eventsv1.EventList)(nil), (*corev1.EventList)(nil), func(a, b any, _ conversion.Scope) error {
		ListToCore(a.(*eventsv1.EventList), b.(*corev1.EventList))
		return nil
	}); err != nil {
		return err
	}
	return s.AddConversionFunc((*corev1.EventList)(nil), (*eventsv1.EventList)(nil), func(a, b any, _ conversion.Scope) error {
		ListFromCore(a.(*corev1.EventList), b.(*eventsv1.EventList))
		return nil
	})
}
