package storagecodec

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// testScheme stands in for apis/scheme, which the storage layer must not
// depend on.
var testScheme = runtime.NewScheme()

func init() { utilruntime.Must(clientgoscheme.AddToScheme(testScheme)) }

var testCodecs = serializer.NewCodecFactory(testScheme)

func configMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", Labels: map[string]string{"k": "v"}},
		Data:       map[string]string{"z": "1", "a": "2"},
	}
}

func TestNewWritesProtobufEnvelope(t *testing.T) {
	codec := New(testScheme, testCodecs, corev1.SchemeGroupVersion)
	data, err := runtime.Encode(codec, configMap())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("k8s\x00")) {
		t.Fatalf("stored bytes start with %q, want the protobuf envelope", data[:min(len(data), 8)])
	}
	again, err := runtime.Encode(codec, configMap())
	if err != nil || !bytes.Equal(data, again) {
		t.Fatalf("encoding is not deterministic (err %v)", err)
	}
	var out corev1.ConfigMap
	if _, _, err := codec.Decode(data, nil, &out); err != nil {
		t.Fatal(err)
	}
	if out.Name != "a" || out.Data["z"] != "1" {
		t.Fatalf("round trip gave %+v", out)
	}
}

func TestDecodesJSONAndProtobuf(t *testing.T) {
	jsonData := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"j","namespace":"ns"},"data":{"x":"y"}}`)
	pbData, err := runtime.Encode(New(testScheme, testCodecs, corev1.SchemeGroupVersion), configMap())
	if err != nil {
		t.Fatal(err)
	}
	for _, codec := range []runtime.Codec{
		New(testScheme, testCodecs, corev1.SchemeGroupVersion),
		NewJSON(testScheme, testCodecs, corev1.SchemeGroupVersion),
	} {
		var fromJSON, fromPB corev1.ConfigMap
		if _, _, err := codec.Decode(jsonData, nil, &fromJSON); err != nil || fromJSON.Data["x"] != "y" {
			t.Fatalf("JSON: %+v, %v", fromJSON, err)
		}
		if _, _, err := codec.Decode(pbData, nil, &fromPB); err != nil || fromPB.Name != "a" {
			t.Fatalf("protobuf: %+v, %v", fromPB, err)
		}
	}
}

func TestNewJSONWritesJSON(t *testing.T) {
	data, err := runtime.Encode(NewJSON(testScheme, testCodecs, corev1.SchemeGroupVersion), configMap())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte(`{"kind":"ConfigMap","apiVersion":"v1"`)) {
		t.Fatalf("got %s", data)
	}
}

func TestGarbageIsAnError(t *testing.T) {
	codec := New(testScheme, testCodecs, corev1.SchemeGroupVersion)
	for _, data := range [][]byte{nil, []byte("garbage"), []byte("k8s\x00\xff\xff\xff"), []byte("{")} {
		var out corev1.ConfigMap
		if _, _, err := codec.Decode(data, nil, &out); err == nil {
			t.Errorf("Decode(%q) succeeded", data)
		}
	}
}

// TestNewConvertingAcrossGroups: a resource served in one group and stored
// in another (events.k8s.io/v1 Events stored as core/v1 Events) converts
// both ways through the scheme.
func TestNewConvertingAcrossGroups(t *testing.T) {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(scheme.AddConversionFunc((*eventsv1.Event)(nil), (*corev1.Event)(nil), func(a, b any, _ conversion.Scope) error {
		in, out := a.(*eventsv1.Event), b.(*corev1.Event)
		out.ObjectMeta, out.Message = in.ObjectMeta, in.Note
		return nil
	}))
	utilruntime.Must(scheme.AddConversionFunc((*corev1.Event)(nil), (*eventsv1.Event)(nil), func(a, b any, _ conversion.Scope) error {
		in, out := a.(*corev1.Event), b.(*eventsv1.Event)
		out.ObjectMeta, out.Note = in.ObjectMeta, in.Message
		return nil
	}))
	codecs := serializer.NewCodecFactory(scheme)
	codec := NewConverting(scheme, codecs, corev1.SchemeGroupVersion, eventsv1.SchemeGroupVersion)
	data, err := runtime.Encode(codec, &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "ns"}, Note: "n"})
	if err != nil {
		t.Fatalf("encoding an events.k8s.io/v1 Event for storage: %v", err)
	}
	var stored corev1.Event
	if _, _, err := New(scheme, codecs, corev1.SchemeGroupVersion).Decode(data, nil, &stored); err != nil || stored.Message != "n" {
		t.Fatalf("stored as core/v1: %+v, %v", stored, err)
	}
	var served eventsv1.Event
	if _, _, err := codec.Decode(data, nil, &served); err != nil || served.Note != "n" || served.Name != "e" {
		t.Fatalf("read back as events.k8s.io/v1: %+v, %v", served, err)
	}
}
