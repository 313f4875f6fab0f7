package server

import (
	"net/http"

	"golang.org/x/net/http2"
)

// configureHTTP2 serves HTTP/2 with a write scheduler that looks only at
// the streams that have frames to write. net/http's own HTTP/2 server
// (and kube-apiserver's) schedules round robin over every open stream:
// each frame written scans the connection's streams, up to 250 idle
// watches, for one with data. With 1,000 watches of one resource, every
// event's fan-out paid that scan once per frame, on each connection's one
// writing goroutine. The random scheduler keeps only streams with queued
// frames, and still writes control frames and resets first.
func configureHTTP2(srv *http.Server) error {
	return http2.ConfigureServer(srv, &http2.Server{NewWriteScheduler: http2.NewRandomWriteScheduler})
}
