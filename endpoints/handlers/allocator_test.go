package handlers

import (
	"bytes"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/apis/scheme"
)

// TestEncodeReusesBuffers: encoding through the pooled buffers writes what
// the codec writes without them, although each buffer was last filled
// with a larger object's bytes, which the encoder does not clear.
func TestEncodeReusesBuffers(t *testing.T) {
	cm := func(name string, size int) corev1.ConfigMap {
		return corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Data: map[string]string{"k": strings.Repeat("x", size)}}
	}
	big, small := cm("big", 4096), cm("small", 3)
	objects := []runtime.Object{
		&big, &small,
		&corev1.ConfigMapList{Items: []corev1.ConfigMap{big, small, cm("other", 100), small}},
		&big,
		&corev1.ConfigMapList{Items: []corev1.ConfigMap{small}},
		&corev1.ConfigMapList{},
	}
	for _, media := range []string{runtime.ContentTypeProtobuf, runtime.ContentTypeJSON} {
		info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), media)
		if !ok {
			t.Fatalf("no serializer for %s", media)
		}
		enc := scheme.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion)
		for range 3 { // the pool hands back the buffers of the earlier rounds
			for i, obj := range objects {
				var want, got bytes.Buffer
				if err := enc.Encode(obj, &want); err != nil {
					t.Fatal(err)
				}
				if err := encodeObject(enc, obj, &got); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), want.Bytes()) {
					t.Fatalf("%s, object %d: encoded\n%q\nwant\n%q", media, i, got.Bytes(), want.Bytes())
				}
			}
		}
	}
}

func TestReusedBufferAllocate(t *testing.T) {
	var b reusedBuffer
	for _, n := range []uint64{0, 10, 5, 100, 64, 1000, 1} {
		got := b.Allocate(n)
		if uint64(len(got)) != n {
			t.Fatalf("Allocate(%d) has length %d", n, len(got))
		}
	}
	if cap(b.buf) < 1000 {
		t.Errorf("the buffer shrank to %d bytes", cap(b.buf))
	}
}
