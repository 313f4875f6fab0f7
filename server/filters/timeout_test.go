package filters

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A handler that ends in time answers as it wrote; one that runs past the
// timeout gets kube's 504; a panic reaches the request's own goroutine.
func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	h := Chain(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case "/panic":
			panic(http.ErrAbortHandler)
		default:
			w.Header().Set("X-Handler", "yes")
			w.WriteHeader(http.StatusTeapot)
			_, _ = w.Write([]byte("body"))
		}
	}), WithTimeout(50*time.Millisecond))

	for range 3 { // the second and third on a worker the first left idle
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/fast", nil))
		if rec.Code != http.StatusTeapot || rec.Body.String() != "body" || rec.Header().Get("X-Handler") != "yes" {
			t.Errorf("fast handler: %d %q %v", rec.Code, rec.Body, rec.Header())
		}
	}

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/slow", nil))
	if rec.Code != http.StatusGatewayTimeout || !strings.Contains(rec.Body.String(), `"reason":"Timeout"`) {
		t.Errorf("slow handler: %d %s", rec.Code, rec.Body)
	}

	func() {
		defer func() {
			if p := recover(); p != http.ErrAbortHandler {
				t.Errorf("panic = %v, want http.ErrAbortHandler", p)
			}
		}()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/panic", nil))
	}()
}

// Work run one piece after another goes to the one worker the first
// started, which keeps its grown stack.
func TestHandlerWorkersReuseGoroutines(t *testing.T) {
	p := newWorkers(time.Minute)
	ids := map[string]bool{}
	done := make(chan string)
	work := func() { done <- goroutineID() }
	p.Run(work)
	ids[<-done] = true
	for range 20 {
		// The worker sends done before it waits for more work: give it
		// the next piece once it does.
		if !offer(p, work) {
			t.Fatal("no worker waits for work")
		}
		ids[<-done] = true
	}
	if len(ids) != 1 {
		t.Errorf("21 pieces of work ran on %d goroutines, want 1", len(ids))
	}
}

// offer hands work to an idle worker, if one comes within many yields.
func offer(p *Workers, work func()) bool {
	for range 1_000_000 {
		select {
		case p.work <- work:
			return true
		default:
			runtime.Gosched()
		}
	}
	return false
}

func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	return string(bytes.Fields(buf)[1])
}
