package wire

import (
	"bytes"
	"io"
	"sync"
)

// BatchSize is how many bytes of queued events a watch gathers
// before it writes them: two DATA frames of 16 KiB.
const BatchSize = 32 << 10

// Backlog is how many queued events make a watch gather them: a
// few events that come together are written as they come, so that the
// thousands of watches a change fans out to do not each take a buffer.
const Backlog = 16

// watchBatches are the buffers of watches that have events queued.
var watchBatches = sync.Pool{New: func() any { return bytes.NewBuffer(make([]byte, 0, BatchSize)) }}

// BatchWriter writes a watch's events to the response, gathering them
// while a backlog is queued. The HTTP/2 server hands a handler's writes to
// the connection's writer in chunks of 4 KiB, each a round trip between
// goroutines, so a stream of many small events costs a round trip per
// few events; written in batches of BatchSize, it costs one per 32 KiB.
// An idle watch holds no buffer: a server has thousands.
type BatchWriter struct {
	W   io.Writer
	buf *bytes.Buffer // nil unless gathering
	// Written counts the bytes given to Write, for the watch event sizes.
	Written int64
}

// Write gathers p while a batch is open, else writes it through.
func (b *BatchWriter) Write(p []byte) (int, error) {
	b.Written += int64(len(p))
	if b.buf == nil {
		return b.W.Write(p)
	}
	if b.buf.Len()+len(p) > BatchSize {
		if err := b.WriteOut(); err != nil {
			return 0, err
		}
	}
	return b.buf.Write(p)
}

// Gather opens a batch, if none is open.
func (b *BatchWriter) Gather() {
	if b.buf == nil {
		b.buf = watchBatches.Get().(*bytes.Buffer)
	}
}

// WriteOut writes the batch gathered so far, if any.
func (b *BatchWriter) WriteOut() error {
	if b.buf == nil || b.buf.Len() == 0 {
		return nil
	}
	_, err := b.W.Write(b.buf.Bytes())
	b.buf.Reset()
	return err
}

// Close writes the batch out and ends it.
func (b *BatchWriter) Close() error {
	if b.buf == nil {
		return nil
	}
	err := b.WriteOut()
	if b.buf.Cap() <= 2*BatchSize {
		watchBatches.Put(b.buf)
	}
	b.buf = nil
	return err
}
