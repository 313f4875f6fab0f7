package handlers

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// gzipWriters are reused: a flate compressor is about 800 KB of state, so
// a new one per large response is most of what a paginated list allocates.
// Responses are compressed at kube's level, BestSpeed: at the default
// level compressing costs more CPU than encoding the objects.
var gzipWriters = sync.Pool{New: func() any {
	w, err := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	if err != nil {
		panic(err) // BestSpeed is a valid level
	}
	return w
}}

// deferredWriter holds the start of a response until it knows whether the
// response is small: a small one is written whole with its Content-Length;
// a large one streams to the client as it is encoded (gzipped when the
// client accepts it), so that a list of N objects never exists twice in
// memory, once as objects and once as bytes.
type deferredWriter struct {
	w           http.ResponseWriter
	r           *http.Request
	code        int
	contentType string

	buf       *bytes.Buffer // from responseBuffers until Close
	streaming io.Writer     // set once the response is large
	gz        *gzip.Writer
}

func newDeferredWriter(w http.ResponseWriter, r *http.Request, code int, contentType string) *deferredWriter {
	buf := responseBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	return &deferredWriter{w: w, r: r, code: code, contentType: contentType, buf: buf}
}

// responseBuffers hold the start of responses. Every response fills one up
// to gzipThreshold before it streams, so a new buffer per response is
// garbage in proportion to the request rate.
var responseBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// releaseBuffer returns the buffer to the pool; the writer must not be
// used after.
func (d *deferredWriter) releaseBuffer() {
	if d.buf.Cap() <= 4*gzipThreshold {
		responseBuffers.Put(d.buf)
	}
	d.buf = nil
}

func (d *deferredWriter) Write(p []byte) (int, error) {
	if d.streaming != nil {
		return d.streaming.Write(p)
	}
	if d.buf.Len()+len(p) <= gzipThreshold {
		return d.buf.Write(p)
	}
	d.startStreaming()
	if _, err := d.streaming.Write(d.buf.Bytes()); err != nil {
		return 0, err
	}
	d.buf.Reset()
	return d.streaming.Write(p)
}

func (d *deferredWriter) startStreaming() {
	h := d.w.Header()
	h.Set("Content-Type", d.contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	d.streaming = d.w
	if acceptsGzip(d.r) {
		h.Set("Content-Encoding", "gzip")
		h.Add("Vary", "Accept-Encoding")
		d.gz = gzipWriters.Get().(*gzip.Writer)
		d.gz.Reset(d.w)
		d.streaming = d.gz
	}
	d.w.WriteHeader(d.code)
	if d.r.Method == http.MethodHead {
		d.streaming = io.Discard
	}
}

// started reports whether bytes have gone to the client.
func (d *deferredWriter) started() bool { return d.streaming != nil }

// Close finishes the response.
func (d *deferredWriter) Close() error {
	defer d.releaseBuffer()
	if d.streaming == nil {
		h := d.w.Header()
		h.Set("Content-Type", d.contentType)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Length", strconv.Itoa(d.buf.Len()))
		d.w.WriteHeader(d.code)
		if d.r.Method != http.MethodHead {
			return writeWhole(d.w, d.buf.Bytes())
		}
		return nil
	}
	if d.gz != nil {
		err := d.gz.Close()
		// Reset drops the reference to the response writer; a writer
		// left mid-stream by an error is reset on its next use.
		d.gz.Reset(io.Discard)
		gzipWriters.Put(d.gz)
		d.gz = nil
		return err
	}
	return nil
}

// http2HandlerBuffer is the HTTP/2 server's buffer of a handler's
// writes: a Write larger than it goes out at once, and what it holds when
// the handler returns goes out in the DATA frame that ends the stream.
// responseTail is the most of a response's end written last so that the
// server holds it, and so that its DATA frame, with the frame's 9-byte
// header, fits the connection's 4 KiB write buffer too.
const (
	http2HandlerBuffer = 4 << 10
	responseTail       = http2HandlerBuffer - 9
)

// writeWhole writes a response that is complete in b. One larger than
// the HTTP/2 server's handler buffer is written in two parts, the last
// one responseTail bytes. Written at once, the server finds nothing
// buffered when the handler returns and ends the stream with an empty
// DATA frame of its own; when the response's last frame was small enough
// to wait in the connection's buffer, that frame and the empty one each
// cost a write to the socket. A tail the server holds goes out in the
// frame that ends the stream. (The hand-offs to the connection's writer
// stay three: headers, data, end.)
func writeWhole(w http.ResponseWriter, b []byte) error {
	if len(b) > http2HandlerBuffer {
		if _, err := w.Write(b[:len(b)-responseTail]); err != nil {
			return err
		}
		b = b[len(b)-responseTail:]
	}
	_, err := w.Write(b)
	return err
}
