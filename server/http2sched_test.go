package server

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// A response of several frames goes out in full TLS records: no record
// of a frame's 9-byte header alone between two of its data.
func TestHTTP2DataFillsTLSRecords(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 40000)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(body)
	}))
	if err := configureHTTP2(srv.Config, 0); err != nil {
		t.Fatal(err)
	}
	conns := &writeSizes{}
	srv.Listener = &recordingListener{Listener: srv.Listener, sizes: conns}
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()

	// TLS starts a connection with small records; past its first 128 KiB
	// it sends full ones.
	for range 5 {
		conns.reset()
		resp, err := srv.Client().Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.ProtoMajor != 2 || !bytes.Equal(got, body) {
			t.Fatalf("GET: %v, HTTP/%d, %d bytes", err, resp.ProtoMajor, len(got))
		}
	}
	// The writes of the response, in order: between its first and last
	// large ones (data), none may be small (a frame header alone).
	sizes := conns.get()
	first, last := -1, -1
	for i, n := range sizes {
		if n >= 4096 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		t.Fatalf("no large write among %v", sizes)
	}
	for _, n := range sizes[first:last] {
		if n < 4096 {
			t.Errorf("the response's data went out in writes of %v bytes: a small one between data", sizes[first:last+1])
			break
		}
	}
}

// writeSizes records the sizes of the writes to the connections under TLS.
type writeSizes struct {
	mu    sync.Mutex // guards sizes
	sizes []int
}

func (w *writeSizes) add(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sizes = append(w.sizes, n)
}

func (w *writeSizes) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sizes = nil
}

func (w *writeSizes) get() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]int(nil), w.sizes...)
}

type recordingListener struct {
	net.Listener
	sizes *writeSizes
}

func (l *recordingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &recordingConn{Conn: c, sizes: l.sizes}, nil
}

type recordingConn struct {
	net.Conn
	sizes *writeSizes
}

func (c *recordingConn) Write(p []byte) (int, error) {
	c.sizes.add(len(p))
	return c.Conn.Write(p)
}
