package core

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"
	remotecommandconsts "k8s.io/apimachinery/pkg/util/remotecommand"
	"k8s.io/client-go/tools/remotecommand"
	clientspdy "k8s.io/client-go/transport/spdy"
	"k8s.io/client-go/util/exec"
	"k8s.io/streaming/pkg/httpstream/spdy"
)

// stdioOptions are the streams a remote command asks for.
type stdioOptions struct{ Stdin, Stdout, Stderr, TTY bool }

// streamTranslator serves a remote command to a WebSocket v5 client over
// a SPDY connection to the kubelet, stream for stream, and reports how
// the command ended on the WebSocket's error channel.
type streamTranslator struct {
	location  *url.URL
	transport http.RoundTripper
	opts      stdioOptions
}

// webSocketIdle ends a WebSocket remote command no one uses.
const webSocketIdle = 4 * time.Hour

func (t *streamTranslator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ws := wsstream.NewConn(map[string]wsstream.ChannelProtocolConfig{
		remotecommandconsts.StreamProtocolV5Name: {Binary: true, Channels: t.channels()},
	})
	ws.SetIdleTimeout(webSocketIdle)
	_, streams, err := ws.Open(w, r)
	if err != nil {
		return // Open answered the request
	}
	defer ws.Close()
	// An empty message on the first writable channel tells the client
	// the streams are open.
	first := remotecommandconsts.StreamErr
	if t.opts.Stdout {
		first = remotecommandconsts.StreamStdOut
	} else if t.opts.Stderr {
		first = remotecommandconsts.StreamStdErr
	}
	if _, err := streams[first].Write(nil); err != nil {
		return
	}
	writeStatus := func(s metav1.Status) {
		if data, err := json.Marshal(s); err == nil {
			_, _ = streams[remotecommandconsts.StreamErr].Write(data)
		}
	}
	err = t.stream(r, streams)
	var statusErr *apierrors.StatusError
	var exitErr exec.CodeExitError
	switch {
	case err == nil:
		writeStatus(metav1.Status{Status: metav1.StatusSuccess})
	case errors.As(err, &statusErr):
		writeStatus(statusErr.ErrStatus)
	case errors.As(err, &exitErr) && exitErr.Exited():
		writeStatus(metav1.Status{Status: metav1.StatusFailure, Reason: remotecommandconsts.NonZeroExitCodeReason,
			Message: fmt.Sprintf("command terminated with non-zero exit code: %v", exitErr),
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: remotecommandconsts.ExitCodeCauseType, Message: fmt.Sprint(exitErr.ExitStatus())}}}})
	default:
		writeStatus(apierrors.NewInternalError(err).ErrStatus)
	}
}

// channels are the v5 channels of the options: stdin, stdout, stderr,
// error and resize, those not asked for ignored.
func (t *streamTranslator) channels() []wsstream.ChannelType {
	pick := func(on bool, c wsstream.ChannelType) wsstream.ChannelType {
		if on {
			return c
		}
		return wsstream.IgnoreChannel
	}
	return []wsstream.ChannelType{
		pick(t.opts.Stdin, wsstream.ReadChannel), pick(t.opts.Stdout, wsstream.WriteChannel),
		pick(t.opts.Stderr, wsstream.WriteChannel), wsstream.WriteChannel, wsstream.ReadChannel,
	}
}

// stream runs the command over SPDY with the WebSocket's streams.
func (t *streamTranslator) stream(r *http.Request, streams []io.ReadWriteCloser) error {
	rt, err := spdy.NewRoundTripperWithConfig(spdy.RoundTripperConfig{UpgradeTransport: t.transport, PingPeriod: 5 * time.Second})
	if err != nil {
		return err
	}
	executor, err := remotecommand.NewSPDYExecutorRejectRedirects(rt, clientspdy.NewUpgraderForStreaming(rt), http.MethodPost, t.location)
	if err != nil {
		return err
	}
	opts := remotecommand.StreamOptions{Tty: t.opts.TTY}
	if t.opts.Stdin {
		opts.Stdin = streams[remotecommandconsts.StreamStdIn]
	}
	if t.opts.Stdout {
		opts.Stdout = streams[remotecommandconsts.StreamStdOut]
	}
	if t.opts.Stderr {
		opts.Stderr = streams[remotecommandconsts.StreamStdErr]
	}
	if t.opts.TTY {
		sizes := make(chan remotecommand.TerminalSize)
		go resizeEvents(r, streams[remotecommandconsts.StreamResize], sizes)
		opts.TerminalSizeQueue = sizeQueue(sizes)
	}
	return executor.StreamWithContext(r.Context(), opts)
}

// resizeEvents decodes the client's terminal sizes into sizes until the
// stream or the request ends.
func resizeEvents(r *http.Request, stream io.Reader, sizes chan<- remotecommand.TerminalSize) {
	defer close(sizes)
	dec := json.NewDecoder(stream)
	for {
		var size remotecommand.TerminalSize
		if dec.Decode(&size) != nil {
			return
		}
		select {
		case sizes <- size:
		case <-r.Context().Done():
			return
		}
	}
}

// sizeQueue hands the SPDY executor the client's terminal sizes.
type sizeQueue chan remotecommand.TerminalSize

func (q sizeQueue) Next() *remotecommand.TerminalSize {
	size, ok := <-q
	if !ok {
		return nil
	}
	return &size
}
