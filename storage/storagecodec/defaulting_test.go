package storagecodec

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestWithDefaultsDefaultsDecoded: what is decoded is defaulted, what is
// encoded is not; no defaults is the codec itself.
func TestWithDefaultsDefaultsDecoded(t *testing.T) {
	plain := New(testScheme, testCodecs, corev1.SchemeGroupVersion)
	if WithDefaults(plain, nil) != plain {
		t.Fatal("WithDefaults with no defaults wrapped the codec")
	}
	codec := WithDefaults(plain, func(obj runtime.Object) {
		if cm, ok := obj.(*corev1.ConfigMap); ok && cm.Data["default"] == "" {
			cm.Data["default"] = "set"
		}
	})
	data, err := runtime.Encode(codec, configMap())
	if err != nil {
		t.Fatal(err)
	}
	stored := &corev1.ConfigMap{}
	if err := runtime.DecodeInto(plain, data, stored); err != nil || stored.Data["default"] != "" {
		t.Fatalf("encoding defaulted: %v, %v", err, stored.Data)
	}
	for _, into := range []runtime.Object{&corev1.ConfigMap{}, nil} {
		got, _, err := codec.Decode(data, nil, into)
		if err != nil {
			t.Fatal(err)
		}
		if cm := got.(*corev1.ConfigMap); cm.Data["default"] != "set" || cm.Data["z"] != "1" {
			t.Fatalf("decoded into %T: data %v, want the default", into, cm.Data)
		}
	}
}
