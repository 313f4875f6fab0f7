package kubelettest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/httpstream/spdy"
)

// portForwardProtocol is the SPDY subprotocol of port forwarding.
const portForwardProtocol = "portforward.k8s.io"

// servePortForward forwards each pair of streams (error and data, with
// the same requestID) to its port on 127.0.0.1 until the client closes
// the connection.
func (k *Kubelet) servePortForward(w http.ResponseWriter, r *http.Request) {
	if _, err := httpstream.Handshake(r, w, []string{portForwardProtocol}); err != nil {
		return
	}
	pairs := &streamPairs{byID: map[string]*streamPair{}}
	conn := spdy.NewResponseUpgrader().UpgradeResponse(w, r, func(s httpstream.Stream, replySent <-chan struct{}) error {
		go func() {
			<-replySent
			if p := pairs.add(s); p != nil {
				go p.forward()
			}
		}()
		return nil
	})
	if conn == nil {
		return
	}
	defer conn.Close()
	select {
	case <-conn.CloseChan():
	case <-k.ctx.Done():
	}
}

// streamPairs matches the error and data streams of each request.
type streamPairs struct {
	mu   sync.Mutex // guards byID
	byID map[string]*streamPair
}

type streamPair struct {
	port        string
	data, error httpstream.Stream
}

// add files s and returns its pair once both streams are there.
func (ps *streamPairs) add(s httpstream.Stream) *streamPair {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	id := s.Headers().Get(corev1.PortForwardRequestIDHeader)
	p := ps.byID[id]
	if p == nil {
		p = &streamPair{port: s.Headers().Get(corev1.PortHeader)}
		ps.byID[id] = p
	}
	switch s.Headers().Get(corev1.StreamType) {
	case corev1.StreamTypeData:
		p.data = s
	case corev1.StreamTypeError:
		p.error = s
	}
	if p.data == nil || p.error == nil {
		return nil
	}
	delete(ps.byID, id)
	return p
}

func (p *streamPair) forward() {
	defer p.data.Close()
	defer p.error.Close()
	port, err := strconv.ParseUint(p.port, 10, 16)
	if err != nil {
		fmt.Fprintf(p.error, "invalid port %q", p.port)
		return
	}
	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.FormatUint(port, 10)))
	if err != nil {
		fmt.Fprintf(p.error, "error forwarding port %d: %v", port, err)
		return
	}
	defer c.Close()
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(c, p.data)
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		close(done)
	}()
	_, _ = io.Copy(p.data, c)
	<-done
}
