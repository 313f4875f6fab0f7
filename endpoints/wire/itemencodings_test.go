package wire

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestItemEncodingsBounded: past its limit the cache encodes without
// remembering, and it forgets an object's encoding once the object is
// collected.
func TestItemEncodingsBounded(t *testing.T) {
	c := NewItemEncodings(1000, 10)
	small := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "small"}}
	large := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "large"}, Data: map[string]string{"k": strings.Repeat("x", 2000)}}
	for _, cm := range []*corev1.ConfigMap{small, large} {
		data, err := c.encode(idOf(cm), cm)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := cm.Marshal(); !bytes.Equal(data, want) {
			t.Errorf("%s encoded as %q, want %q", cm.Name, data, want)
		}
	}
	if c.Lookup(idOf(small), Protobuf) == nil {
		t.Error("the small object's encoding was not remembered")
	}
	if c.Lookup(idOf(large), Protobuf) != nil {
		t.Error("an encoding past the limit was remembered")
	}
	if got, want := c.bytes.Load(), int64(small.Size()); got != want {
		t.Errorf("%d bytes remembered, want %d", got, want)
	}
	runtime.KeepAlive(small)
	small = nil
	for range 200 {
		runtime.GC()
		if c.bytes.Load() == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond) // cleanups run after the collection
	}
	t.Errorf("%d bytes still remembered after the object was collected", c.bytes.Load())
}

func idOf(cm *corev1.ConfigMap) *byte { return (*byte)(unsafe.Pointer(cm)) }
