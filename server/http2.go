package server

import (
	"math"
	"net/http"
	"time"

	"golang.org/x/net/http2"
)

// HTTP/2 limits, as kube-apiserver sets them, so that clients see the same
// SETTINGS frame: client-go opens a new connection whenever one has
// MaxConcurrentStreams requests open, so the number decides how many
// connections 1,000 watches take.
const (
	// defaultHTTP2MaxStreams is the streams a client may open on one
	// connection unless --http2-max-streams-per-connection says otherwise:
	// Go's client starts from 100 too, so a client cannot open many more
	// before it learns the limit.
	defaultHTTP2MaxStreams = 100
	// http2MaxFrameSize bounds the frames a client may send and each
	// stream's upload buffer. Nearly every object fits in one frame of
	// 256 KiB; a bigger one spans several.
	http2MaxFrameSize = 256 << 10
	// idleTimeout closes a connection with no open stream after as long
	// as Go's client keeps one.
	idleTimeout = 90 * time.Second
)

// http2Settings returns the HTTP/2 server for at most maxStreams open
// streams per connection (0: the default). The connection's upload buffer
// holds a full frame for each stream.
//
// Its write scheduler looks only at the streams that have frames to write.
// net/http's own HTTP/2 server (and kube-apiserver's) schedules round
// robin over every open stream: each frame written scans the connection's
// streams, every idle watch included, for one with data. With 1,000
// watches of one resource, every event's fan-out paid that scan once per
// frame, on each connection's one writing goroutine. The random scheduler
// keeps only streams with queued frames, and still writes control frames
// and resets first; DATA frames are cut to fill TLS records
// (recordSizedScheduler).
func http2Settings(maxStreams int) *http2.Server {
	if maxStreams <= 0 {
		maxStreams = defaultHTTP2MaxStreams
	}
	connBuffer := min(int64(http2MaxFrameSize)*int64(maxStreams), math.MaxInt32)
	return &http2.Server{
		MaxConcurrentStreams:         uint32(maxStreams),
		MaxReadFrameSize:             http2MaxFrameSize,
		MaxUploadBufferPerStream:     http2MaxFrameSize,
		MaxUploadBufferPerConnection: int32(connBuffer),
		IdleTimeout:                  idleTimeout,
		NewWriteScheduler:            newRecordSizedScheduler,
	}
}

// configureHTTP2 serves HTTP/2 on srv with http2Settings.
func configureHTTP2(srv *http.Server, maxStreams int) error {
	return http2.ConfigureServer(srv, http2Settings(maxStreams))
}
