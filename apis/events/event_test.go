package events

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/apis/convert"
)

func validEvent() *eventsv1.Event {
	return &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: "e", Namespace: "ns"},
		EventTime:           metav1.NewMicroTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
		ReportingController: "example.com/ctrl",
		ReportingInstance:   "ctrl-1",
		Action:              "Bind",
		Reason:              "Scheduled",
		Regarding:           corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "p"},
		Note:                "bound",
		Type:                corev1.EventTypeNormal,
	}
}

type wantErr struct {
	typ   field.ErrorType
	field string
}

func errsOf(list field.ErrorList) []wantErr {
	var out []wantErr
	for _, e := range list {
		out = append(out, wantErr{e.Type, e.Field})
	}
	return out
}

func TestValidate(t *testing.T) {
	inv := func(f string) wantErr { return wantErr{field.ErrorTypeInvalid, f} }
	req := func(f string) wantErr { return wantErr{field.ErrorTypeRequired, f} }
	tests := []struct {
		name   string
		mutate func(*eventsv1.Event)
		want   []wantErr
	}{
		{"valid", func(*eventsv1.Event) {}, nil},
		{"no eventTime", func(e *eventsv1.Event) { e.EventTime = metav1.MicroTime{} }, []wantErr{req("eventTime")}},
		{"no controller", func(e *eventsv1.Event) { e.ReportingController = "" },
			[]wantErr{req("reportingController"), inv("reportingController"), inv("reportingController")}},
		{"no instance", func(e *eventsv1.Event) { e.ReportingInstance = "" }, []wantErr{req("reportingInstance")}},
		{"no action", func(e *eventsv1.Event) { e.Action = "" }, []wantErr{req("action")}},
		{"no reason", func(e *eventsv1.Event) { e.Reason = "" }, []wantErr{req("reason")}},
		{"cluster object outside default", func(e *eventsv1.Event) { e.Regarding.Namespace = "" }, []wantErr{inv("involvedObject.namespace")}},
		{"deprecated count", func(e *eventsv1.Event) { e.DeprecatedCount = 1 }, []wantErr{inv("count")}},
		{"bad type", func(e *eventsv1.Event) { e.Type = "" }, []wantErr{inv("type")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := validEvent()
			tt.mutate(ev)
			if got := errsOf(EventStrategy{}.Validate(context.Background(), ev)); !slices.Equal(got, tt.want) {
				t.Errorf("errors = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	old := validEvent()
	changed := validEvent()
	changed.Note = "other"
	got := errsOf(EventStrategy{}.ValidateUpdate(context.Background(), changed, old))
	if want := []wantErr{{field.ErrorTypeInvalid, "message"}}; !slices.Equal(got, want) {
		t.Errorf("errors = %v, want %v", got, want)
	}
	// The Store may hand over the stored core/v1 object as old.
	oldCore := &corev1.Event{}
	convert.ToCore(old, oldCore)
	series := validEvent()
	series.Series = &eventsv1.EventSeries{Count: 2, LastObservedTime: metav1.NowMicro()}
	if errs := (EventStrategy{}).ValidateUpdate(context.Background(), series, oldCore); len(errs) != 0 {
		t.Errorf("series update: %v", errs)
	}
}

func TestFields(t *testing.T) {
	empty := EventStrategy{}.Fields(&eventsv1.Event{})
	var keys []string
	for k := range empty {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{
		"reason", "regarding.apiVersion", "regarding.fieldPath", "regarding.kind", "regarding.name",
		"regarding.namespace", "regarding.resourceVersion", "regarding.uid", "reportingController", "type",
	}
	if !slices.Equal(keys, want) {
		t.Errorf("keys = %v, want %v", keys, want)
	}
	set := EventStrategy{}.Fields(validEvent())
	if set["regarding.name"] != "p" || set["reportingController"] != "example.com/ctrl" || set["type"] != "Normal" {
		t.Errorf("fields = %v", set)
	}
	for _, k := range append(want, "metadata.name", "metadata.namespace") {
		if _, ok := CoreFieldLabel(k); !ok {
			t.Errorf("CoreFieldLabel(%q) unsupported", k)
		}
	}
	if l, _ := CoreFieldLabel("regarding.uid"); l != "involvedObject.uid" {
		t.Errorf("CoreFieldLabel(regarding.uid) = %q", l)
	}
	if _, ok := CoreFieldLabel("source"); ok {
		t.Error("source is not a selector of events.k8s.io/v1")
	}
}
