package core

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// legacyEvent is a valid event as old clients write it: no eventTime.
func legacyEvent() *corev1.Event {
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "e", Namespace: "ns"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "p"},
		Reason:         "Started",
		Source:         corev1.EventSource{Component: "kubelet"},
		Count:          1,
	}
}

// newEvent is a valid event as events.k8s.io/v1 clients write it.
func newEvent() *corev1.Event {
	return &corev1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: "e", Namespace: "ns"},
		InvolvedObject:      corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "p"},
		EventTime:           metav1.NewMicroTime(time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)),
		ReportingController: "example.com/controller",
		ReportingInstance:   "controller-1",
		Action:              "Scheduling",
		Reason:              "Scheduled",
		Message:             "done",
		Type:                corev1.EventTypeNormal,
	}
}

func TestValidateEventCommon(t *testing.T) {
	long := strings.Repeat("x", 129)
	tests := []struct {
		name   string
		event  func() *corev1.Event
		mutate func(*corev1.Event)
		core   []wantErr // under CoreV1EventRules
	}{
		{"legacy", legacyEvent, func(*corev1.Event) {}, nil},
		{"legacy namespace mismatch", legacyEvent, func(e *corev1.Event) { e.InvolvedObject.Namespace = "other" },
			[]wantErr{inv("involvedObject.namespace")}},
		{"legacy cluster object in default", legacyEvent, func(e *corev1.Event) { e.InvolvedObject.Namespace = ""; e.Namespace = "default" }, nil},
		{"legacy cluster object elsewhere", legacyEvent, func(e *corev1.Event) { e.InvolvedObject.Namespace = "" },
			[]wantErr{inv("involvedObject.namespace")}},
		{"new", newEvent, func(*corev1.Event) {}, nil},
		{"new namespace mismatch allowed", newEvent, func(e *corev1.Event) { e.InvolvedObject.Namespace = "other" }, nil},
		{"new cluster object in kube-system", newEvent, func(e *corev1.Event) { e.InvolvedObject.Namespace = ""; e.Namespace = "kube-system" }, nil},
		{"new cluster object elsewhere", newEvent, func(e *corev1.Event) { e.InvolvedObject.Namespace = "" },
			[]wantErr{inv("involvedObject.namespace")}},
		{"no controller", newEvent, func(e *corev1.Event) { e.ReportingController = "" },
			[]wantErr{req("reportingComponent"), inv("reportingComponent"), inv("reportingComponent")}},
		{"bad controller", newEvent, func(e *corev1.Event) { e.ReportingController = "a/b/c" }, []wantErr{inv("reportingComponent")}},
		{"no instance", newEvent, func(e *corev1.Event) { e.ReportingInstance = "" }, []wantErr{req("reportingInstance")}},
		{"long instance", newEvent, func(e *corev1.Event) { e.ReportingInstance = long }, []wantErr{inv("reportingInstance")}},
		{"no action", newEvent, func(e *corev1.Event) { e.Action = "" }, []wantErr{req("action")}},
		{"long action", newEvent, func(e *corev1.Event) { e.Action = long }, []wantErr{inv("action")}},
		{"no reason", newEvent, func(e *corev1.Event) { e.Reason = "" }, []wantErr{req("reason")}},
		{"long reason", newEvent, func(e *corev1.Event) { e.Reason = long }, []wantErr{inv("reason")}},
		{"long message", newEvent, func(e *corev1.Event) { e.Message = strings.Repeat("x", 1025) }, []wantErr{inv("message")}},
		{"message at limit", newEvent, func(e *corev1.Event) { e.Message = strings.Repeat("x", 1024) }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := tt.event()
			tt.mutate(ev)
			checkErrs(t, EventStrategy{}.Validate(context.Background(), ev), tt.core...)
			checkErrs(t, EventStrategy{}.ValidateUpdate(context.Background(), ev, legacyEvent()), tt.core...)
		})
	}
}

func TestValidateEventStrict(t *testing.T) {
	now := metav1.Now()
	tests := []struct {
		name   string
		mutate func(*corev1.Event)
		want   []wantErr
	}{
		{"valid", func(*corev1.Event) {}, nil},
		{"controller path", func(e *corev1.Event) { e.ReportingController = "a/b/c" }, []wantErr{inv("reportingController")}},
		{"no eventTime", func(e *corev1.Event) { e.EventTime = metav1.MicroTime{} }, []wantErr{req("eventTime")}},
		{"bad type", func(e *corev1.Event) { e.Type = "Info" }, []wantErr{inv("type")}},
		{"firstTimestamp", func(e *corev1.Event) { e.FirstTimestamp = now }, []wantErr{inv("firstTimestamp")}},
		{"lastTimestamp", func(e *corev1.Event) { e.LastTimestamp = now }, []wantErr{inv("lastTimestamp")}},
		{"count", func(e *corev1.Event) { e.Count = 2 }, []wantErr{inv("count")}},
		{"source", func(e *corev1.Event) { e.Source.Host = "node" }, []wantErr{inv("source")}},
		{"series", func(e *corev1.Event) { e.Series = &corev1.EventSeries{Count: 2, LastObservedTime: metav1.NowMicro()} }, nil},
		{"short series", func(e *corev1.Event) { e.Series = &corev1.EventSeries{Count: 1, LastObservedTime: metav1.NowMicro()} },
			[]wantErr{inv("series.count")}},
		{"untimed series", func(e *corev1.Event) { e.Series = &corev1.EventSeries{Count: 3} }, []wantErr{req("series.lastObservedTime")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := newEvent()
			tt.mutate(ev)
			checkErrs(t, ValidateEvent(ev, EventsV1EventRules), tt.want...)
		})
	}
}

func TestValidateEventUpdateStrict(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*corev1.Event)
		want   []wantErr
	}{
		{"unchanged", func(*corev1.Event) {}, nil},
		{"series added", func(e *corev1.Event) { e.Series = &corev1.EventSeries{Count: 2, LastObservedTime: metav1.NowMicro()} }, nil},
		{"bad series added", func(e *corev1.Event) { e.Series = &corev1.EventSeries{Count: 1} },
			[]wantErr{inv("series.count"), req("series.lastObservedTime")}},
		{"labels change", func(e *corev1.Event) { e.Labels = map[string]string{"a": "b"} }, nil},
		{"sub-microsecond eventTime", func(e *corev1.Event) { e.EventTime.Time = e.EventTime.Add(500) }, nil},
		{"eventTime", func(e *corev1.Event) { e.EventTime.Time = e.EventTime.Add(time.Second) }, []wantErr{inv("eventTime")}},
		{"involvedObject", func(e *corev1.Event) { e.InvolvedObject.Name = "q" }, []wantErr{inv("involvedObject")}},
		{"reason twice", func(e *corev1.Event) { e.Reason = "Other" }, []wantErr{inv("reason"), inv("reason")}},
		{"message", func(e *corev1.Event) { e.Message = "other" }, []wantErr{inv("message")}},
		{"type", func(e *corev1.Event) { e.Type = corev1.EventTypeWarning }, []wantErr{inv("type")}},
		{"action", func(e *corev1.Event) { e.Action = "Other" }, []wantErr{inv("action")}},
		{"related", func(e *corev1.Event) { e.Related = &corev1.ObjectReference{Name: "x"} }, []wantErr{inv("related")}},
		{"controller", func(e *corev1.Event) { e.ReportingController = "example.com/other" }, []wantErr{inv("reportingController")}},
		{"instance", func(e *corev1.Event) { e.ReportingInstance = "other" }, []wantErr{inv("reportingInstance")}},
		{"count", func(e *corev1.Event) { e.Count = 3 }, []wantErr{inv("count")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := newEvent()
			tt.mutate(ev)
			checkErrs(t, ValidateEventUpdate(ev, newEvent(), EventsV1EventRules), tt.want...)
		})
	}
	// core/v1 allows every change.
	changed := newEvent()
	changed.Reason, changed.Message = "Other", "other"
	checkErrs(t, ValidateEventUpdate(changed, newEvent(), CoreV1EventRules))
}
