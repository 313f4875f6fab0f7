package handlers

import (
	"io"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
)

// encodeBuffers are the scratch buffers protobuf encoders marshal each
// object (each item of a list the codec encodes) into before they write
// it. Without one, the encoder allocates a new buffer per object: half of
// what a codec-encoded list of 100 small objects allocated.
var encodeBuffers = sync.Pool{New: func() any { return new(reusedBuffer) }}

// maxPooledEncodeBuffer bounds the buffers kept: one large object must not
// pin its size in the pool for ever.
const maxPooledEncodeBuffer = 1 << 20

// reusedBuffer is a runtime.MemoryAllocator over one buffer, handed out
// again by each Allocate. An encoder writes what it marshalled before it
// asks for more, and writers copy what they are given, so one buffer
// serves every object of a response.
type reusedBuffer struct{ buf []byte }

func (b *reusedBuffer) Allocate(n uint64) []byte {
	if uint64(cap(b.buf)) < n {
		b.buf = make([]byte, n, max(n, 2*uint64(cap(b.buf))))
	}
	return b.buf[:n]
}

// encodeObject writes obj with enc, into a pooled buffer where enc can use one.
func encodeObject(enc runtime.Encoder, obj runtime.Object, w io.Writer) error {
	withAlloc, ok := enc.(runtime.EncoderWithAllocator)
	if !ok {
		return enc.Encode(obj, w)
	}
	buf := encodeBuffers.Get().(*reusedBuffer)
	err := withAlloc.EncodeWithAllocator(obj, w, buf)
	if cap(buf.buf) <= maxPooledEncodeBuffer {
		encodeBuffers.Put(buf)
	}
	return err
}
