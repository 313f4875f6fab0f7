package handlers

import (
	"bytes"
	"context"
	"net/http"

	"golang.org/x/net/websocket"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/metrics"
)

// streamEventsWebSocket serves a watch to a WebSocket client (a browser),
// as kube does: one message per event, holding the event as the HTTP
// stream would write it but without the stream's framing, in text
// messages when the media type is text. The client sends nothing; when
// it closes the connection the watch ends.
func (s *Scope) streamEventsWebSocket(ctx context.Context, w http.ResponseWriter, r *http.Request, out output, wi watch.Interface) {
	w.Header().Set("Content-Type", out.info.MediaType)
	websocket.Handler(func(ws *websocket.Conn) {
		defer ws.Close()
		gone := make(chan struct{})
		go func() {
			defer close(gone)
			wsstream.IgnoreReceives(ws, 0)
		}()
		var buf bytes.Buffer
		events := newWatchEncoder(s, r, out, &buf)
		// A length-delimited frame starts with its length; a WebSocket
		// message has one of its own.
		skip := 0
		if out.info.StreamSerializer.Framer == protobuf.LengthDelimitedFramer {
			skip = 4
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-gone:
				return
			case ev, ok := <-wi.ResultChan():
				if !ok {
					return
				}
				buf.Reset()
				if err := events.write(&buf, ev); err != nil || buf.Len() < skip {
					return
				}
				if err := sendMessage(ws, buf.Bytes()[skip:], out.info.EncodesAsText); err != nil {
					return
				}
				if initialEventsEnd(ev) {
					metrics.WatchListSent(r.Context())
				}
			}
		}
	}).ServeHTTP(w, r)
}

func sendMessage(ws *websocket.Conn, p []byte, text bool) error {
	if text {
		return websocket.Message.Send(ws, string(p))
	}
	return websocket.Message.Send(ws, p)
}
