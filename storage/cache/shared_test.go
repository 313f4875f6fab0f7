package cache

import (
	"bytes"
	"io"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
)

func TestSharedObjectEncodesOncePerEncoder(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", ResourceVersion: "7"}, Data: map[string]string{"k": "v"}}
	o := newSharedObject(cm)

	calls := map[runtime.Identifier]int{}
	encodeAs := func(id runtime.Identifier, text string) string {
		var buf bytes.Buffer
		err := o.CacheEncode(id, func(obj runtime.Object, w io.Writer) error {
			calls[id]++
			if obj == runtime.Object(cm) {
				t.Error("the encoder was given the cache's own object")
			}
			obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
			_, err := io.WriteString(w, text)
			return err
		}, &buf)
		if err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	for range 3 {
		if got := encodeAs("json", "J"); got != "J" {
			t.Errorf("json encoding = %q", got)
		}
		if got := encodeAs("proto", "P"); got != "P" {
			t.Errorf("proto encoding = %q", got)
		}
	}
	if calls["json"] != 1 || calls["proto"] != 1 {
		t.Errorf("encoder calls = %v, want one per identifier", calls)
	}
	if !cm.GetObjectKind().GroupVersionKind().Empty() {
		t.Errorf("encoding changed the cache's object: kind %v", cm.GetObjectKind().GroupVersionKind())
	}
	o.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "Secret"})
	if !o.GetObjectKind().GroupVersionKind().Empty() {
		t.Error("setting the wrapper's kind took effect")
	}
	c := o.GetObject().(*corev1.ConfigMap)
	c.Data["k"] = "changed"
	if cm.Data["k"] != "v" {
		t.Error("GetObject did not return a copy")
	}
}

// TestSharedObjectSerializers checks that apimachinery's serializers,
// which the watch handler uses, encode a shared object as they encode the
// object itself.
func TestSharedObjectSerializers(t *testing.T) {
	codecs := serializer.NewCodecFactory(scheme.Scheme)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", ResourceVersion: "7"}, Data: map[string]string{"k": "v"}}
	for _, info := range codecs.SupportedMediaTypes() {
		t.Run(info.MediaType, func(t *testing.T) {
			enc := codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion)
			var want, got bytes.Buffer
			if err := enc.Encode(cm.DeepCopy(), &want); err != nil {
				t.Fatal(err)
			}
			shared := newSharedObject(cm)
			for range 2 {
				got.Reset()
				if err := enc.Encode(shared, &got); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), want.Bytes()) {
					t.Errorf("shared encoding\n%q\nwant\n%q", got.Bytes(), want.Bytes())
				}
			}
		})
	}
}
