package storagecodec

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
