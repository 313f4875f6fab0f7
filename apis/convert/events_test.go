package convert

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
)

var (
	t1 = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	t2 = metav1.NewTime(time.Date(2026, 1, 2, 3, 5, 5, 0, time.UTC))
	mt = metav1.NewMicroTime(time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC))
)

// fullPair is an event with every field set, in both group versions.
func fullPair() (*eventsv1.Event, *corev1.Event) {
	meta := metav1.ObjectMeta{Name: "e", Namespace: "ns", Labels: map[string]string{"a": "b"}, ResourceVersion: "7"}
	regarding := corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "p", UID: "u", APIVersion: "v1", ResourceVersion: "3", FieldPath: "spec"}
	related := &corev1.ObjectReference{Kind: "Node", Name: "n"}
	source := corev1.EventSource{Component: "kubelet", Host: "node"}
	ev := &eventsv1.Event{
		ObjectMeta: meta, EventTime: mt,
		Series:              &eventsv1.EventSeries{Count: 4, LastObservedTime: mt},
		ReportingController: "ctrl", ReportingInstance: "inst", Action: "Act", Reason: "Why",
		Regarding: regarding, Related: related, Note: "note", Type: "Normal",
		DeprecatedSource: source, DeprecatedFirstTimestamp: t1, DeprecatedLastTimestamp: t2, DeprecatedCount: 5,
	}
	core := &corev1.Event{
		ObjectMeta: meta, EventTime: mt,
		Series:              &corev1.EventSeries{Count: 4, LastObservedTime: mt},
		ReportingController: "ctrl", ReportingInstance: "inst", Action: "Act", Reason: "Why",
		InvolvedObject: regarding, Related: related, Message: "note", Type: "Normal",
		Source: source, FirstTimestamp: t1, LastTimestamp: t2, Count: 5,
	}
	return ev, core
}

func TestConversion(t *testing.T) {
	fullEv, fullCore := fullPair()
	tests := []struct {
		name string
		ev   *eventsv1.Event
		core *corev1.Event
	}{
		{"empty", &eventsv1.Event{}, &corev1.Event{}},
		{"full", fullEv, fullCore},
		{"regarding only", &eventsv1.Event{Regarding: corev1.ObjectReference{Name: "x"}}, &corev1.Event{InvolvedObject: corev1.ObjectReference{Name: "x"}}},
		{"note only", &eventsv1.Event{Note: "n"}, &corev1.Event{Message: "n"}},
		{"count only", &eventsv1.Event{DeprecatedCount: 2}, &corev1.Event{Count: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotCore := &corev1.Event{}
			ToCore(tt.ev, gotCore)
			if !equality.Semantic.DeepEqual(gotCore, tt.core) {
				t.Errorf("ToCore = %+v\nwant %+v", gotCore, tt.core)
			}
			gotEv := &eventsv1.Event{}
			FromCore(tt.core, gotEv)
			if !equality.Semantic.DeepEqual(gotEv, tt.ev) {
				t.Errorf("FromCore = %+v\nwant %+v", gotEv, tt.ev)
			}
			back := &eventsv1.Event{}
			FromCore(gotCore, back)
			if !equality.Semantic.DeepEqual(back, tt.ev) {
				t.Errorf("round trip = %+v\nwant %+v", back, tt.ev)
			}
		})
	}
}

func TestConversionSharesNoMemory(t *testing.T) {
	ev, _ := fullPair()
	core := &corev1.Event{}
	ToCore(ev, core)
	core.Labels["a"] = "changed"
	core.Series.Count = 99
	core.Related.Name = "changed"
	if ev.Labels["a"] != "b" || ev.Series.Count != 4 || ev.Related.Name != "n" {
		t.Errorf("ToCore aliased its input: %+v", ev)
	}
}

func TestSchemeConversion(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddConversionFuncs(s); err != nil {
		t.Fatal(err)
	}
	ev, core := fullPair()
	got := &corev1.Event{}
	if err := s.Convert(ev, got, nil); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(got, core) {
		t.Errorf("scheme ToCore = %+v", got)
	}
	list := &eventsv1.EventList{ListMeta: metav1.ListMeta{ResourceVersion: "9"}}
	if err := s.Convert(&corev1.EventList{ListMeta: metav1.ListMeta{ResourceVersion: "9"}, Items: []corev1.Event{*core}}, list, nil); err != nil {
		t.Fatal(err)
	}
	if list.ResourceVersion != "9" || len(list.Items) != 1 || !equality.Semantic.DeepEqual(&list.Items[0], ev) {
		t.Errorf("scheme list FromCore = %+v", list)
	}
	back := &corev1.EventList{}
	if err := s.Convert(list, back, nil); err != nil || len(back.Items) != 1 || back.Items[0].Message != "note" {
		t.Errorf("scheme list ToCore = %+v, %v", back, err)
	}
}
