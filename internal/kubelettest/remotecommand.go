package kubelettest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/httpstream/spdy"
	"k8s.io/apimachinery/pkg/util/remotecommand"
)

// remoteCommandProtocols are the SPDY subprotocols of exec and attach
// served: v4 and v5 (the same over SPDY) report exit codes as a Status.
var remoteCommandProtocols = []string{remotecommand.StreamProtocolV5Name, remotecommand.StreamProtocolV4Name}

// streamWait bounds the wait for a client's streams after the upgrade.
const streamWait = 30 * time.Second

// session is one exec or attach: the upgraded connection and its streams.
type session struct {
	conn                  httpstream.Connection
	stdin, resize         io.Reader
	stdout, stderr, errCh httpstream.Stream
	tty                   bool
}

// upgrade negotiates the protocol, takes the connection over and waits
// for the streams the query asks for. On failure the answer is written.
func upgrade(w http.ResponseWriter, r *http.Request) (*session, bool) {
	q := r.URL.Query()
	stdin, stdout, stderr, tty := q.Get("input") == "1", q.Get("output") == "1", q.Get("error") == "1", q.Get("tty") == "1"
	if !stdin && !stdout && !stderr {
		httpError(w, http.StatusBadRequest, "you must specify at least 1 of stdin, stdout, stderr")
		return nil, false
	}
	if _, err := httpstream.Handshake(r, w, remoteCommandProtocols); err != nil {
		return nil, false
	}
	streams := make(chan httpstream.Stream, 8)
	conn := spdy.NewResponseUpgrader().UpgradeResponse(w, r, func(s httpstream.Stream, replySent <-chan struct{}) error {
		go func() { <-replySent; streams <- s }()
		return nil
	})
	if conn == nil {
		return nil, false
	}
	want := 1 // the error stream
	for _, on := range []bool{stdin, stdout, stderr && !tty, tty} {
		if on {
			want++
		}
	}
	s := &session{conn: conn, tty: tty}
	timeout := time.After(streamWait)
	for got := 0; got < want; got++ {
		select {
		case st := <-streams:
			s.add(st)
		case <-timeout:
			conn.Close()
			return nil, false
		}
	}
	return s, true
}

func (s *session) add(st httpstream.Stream) {
	switch st.Headers().Get(corev1.StreamType) {
	case corev1.StreamTypeStdin:
		s.stdin = st
	case corev1.StreamTypeStdout:
		s.stdout = st
	case corev1.StreamTypeStderr:
		s.stderr = st
	case corev1.StreamTypeError:
		s.errCh = st
	case corev1.StreamTypeResize:
		s.resize = st
	}
}

// output is where the command's stdout and stderr go: with a TTY both go
// to stdout, as a terminal merges them.
func (s *session) output() (stdout, stderr io.Writer) {
	if s.stdout != nil {
		stdout = s.stdout
	}
	if s.tty {
		return stdout, stdout
	}
	if s.stderr != nil {
		stderr = s.stderr
	}
	return stdout, stderr
}

// finish reports how the command ended, as a v4 Status on the error
// stream, and closes the connection.
func (s *session) finish(exitCode int, err error) {
	for _, st := range []httpstream.Stream{s.stdout, s.stderr} {
		if st != nil {
			st.Close()
		}
	}
	status := metav1.Status{Status: metav1.StatusSuccess}
	switch {
	case err != nil:
		status = metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
			Reason: metav1.StatusReasonInternalError, Message: err.Error()}
	case exitCode != 0:
		status = metav1.Status{Status: metav1.StatusFailure, Reason: remotecommand.NonZeroExitCodeReason,
			Message: fmt.Sprintf("command terminated with non-zero exit code: exit status %d", exitCode),
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: remotecommand.ExitCodeCauseType, Message: fmt.Sprint(exitCode)}}}}
	}
	if data, jerr := json.Marshal(status); jerr == nil && s.errCh != nil {
		_, _ = s.errCh.Write(data)
		s.errCh.Close()
	}
	s.conn.Close()
}

// terminalSizes reads the resize stream into sizes until it ends.
func (s *session) terminalSizes(record func(TerminalSize)) {
	if s.resize == nil {
		return
	}
	dec := json.NewDecoder(s.resize)
	for {
		var size TerminalSize
		if dec.Decode(&size) != nil {
			return
		}
		record(size)
	}
}

// TerminalSize is a resize event of a TTY session.
type TerminalSize struct{ Width, Height uint16 }
