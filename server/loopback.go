package server

import (
	"crypto/subtle"
	"io"
	"net/http"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/rest"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/server/filters"
)

// LoopbackUser is the identity of the server's own client: the post-start
// hooks and built-in controllers act as it.
const LoopbackUser = "system:apiserver"

// Loopback is the server's privileged in-process client: a bearer token
// that only this process knows, and a transport that hands requests
// straight to the handler chain without a network.
type Loopback struct {
	token     string
	transport *inProcessTransport
}

// NewLoopback returns a Loopback with a fresh token. Its transport serves
// nothing until the server's handler is set with SetHandler.
func NewLoopback() *Loopback {
	return &Loopback{token: string(uuid.NewUUID()), transport: &inProcessTransport{workers: filters.NewWorkers()}}
}

// Config is a client-go config that reaches the server in-process.
func (l *Loopback) Config() *rest.Config {
	return &rest.Config{
		Host:        "https://loopback.capstan.internal",
		BearerToken: l.token,
		Transport:   l.transport,
		QPS:         -1, // the server's own client is not rate limited
		// The server's own loops write deprecated kinds on purpose (the
		// kubernetes service's v1 Endpoints): their warnings are not news.
		WarningHandler: rest.NoWarnings{},
		ContentConfig: rest.ContentConfig{
			ContentType: "application/vnd.kubernetes.protobuf",
		},
	}
}

// SetHandler sets the handler the loopback transport calls.
func (l *Loopback) SetHandler(h http.Handler) { l.transport.set(h) }

// Authenticator accepts the loopback token as system:apiserver in
// system:masters.
func (l *Loopback) Authenticator() authn.Authenticator {
	return authn.AuthenticatorFunc(func(r *http.Request) (*authn.Response, bool, error) {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(token), []byte(l.token)) != 1 {
			return nil, false, nil
		}
		return &authn.Response{User: &authn.User{
			Name: LoopbackUser, UID: string(uuid.NewUUID()),
			Groups: []string{"system:masters", "system:authenticated"},
		}}, true, nil
	})
}

// inProcessTransport is an http.RoundTripper that calls a handler. The
// response body is a pipe, so watches stream as they do over a network.
type inProcessTransport struct {
	mu      sync.RWMutex // guards handler
	handler http.Handler
	// workers run the handlers: goroutines whose stacks grew through the
	// handler chain already.
	workers *filters.Workers
}

func (t *inProcessTransport) set(h http.Handler) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.handler = h
}

func (t *inProcessTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.mu.RLock()
	h := t.handler
	t.mu.RUnlock()
	if h == nil {
		return nil, &loopbackError{"the server is not serving yet"}
	}
	sreq := req.Clone(withLoopback(req.Context()))
	sreq.RemoteAddr = "127.0.0.1:0"
	sreq.RequestURI = req.URL.RequestURI()
	if sreq.Body == nil {
		sreq.Body = http.NoBody
	}
	pr, pw := io.Pipe()
	rw := &pipeWriter{header: http.Header{}, pw: pw, started: make(chan struct{})}
	t.workers.Run(func() {
		defer func() {
			if p := recover(); p != nil {
				pw.CloseWithError(&loopbackError{"handler aborted"})
			}
			rw.WriteHeader(http.StatusOK) // no-op if already written
			_ = pw.Close()
		}()
		h.ServeHTTP(rw, sreq)
	})
	select {
	case <-rw.started:
	case <-req.Context().Done():
		_ = pr.Close()
		return nil, req.Context().Err()
	}
	return &http.Response{
		Status: http.StatusText(rw.code), StatusCode: rw.code, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: rw.sent, Body: pr, ContentLength: -1, Request: req,
	}, nil
}

// pipeWriter is the server side of an in-process response.
type pipeWriter struct {
	header  http.Header
	sent    http.Header // the header as it was when the response started
	code    int
	pw      *io.PipeWriter
	once    sync.Once
	started chan struct{}
}

func (p *pipeWriter) Header() http.Header { return p.header }

func (p *pipeWriter) WriteHeader(code int) {
	p.once.Do(func() {
		p.code = code
		p.sent = p.header.Clone()
		close(p.started)
	})
}

func (p *pipeWriter) Write(b []byte) (int, error) {
	p.WriteHeader(http.StatusOK)
	return p.pw.Write(b)
}

// Flush is a no-op: every write already reaches the reader.
func (p *pipeWriter) Flush() {}

type loopbackError struct{ msg string }

func (e *loopbackError) Error() string { return "loopback: " + e.msg }
