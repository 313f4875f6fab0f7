package e2eutil

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// GatedConversion is a conversion webhook whose calls wait at a gate: a
// request converting objects stays in flight until the test opens the
// gate; reset closes it again for the next request.
type GatedConversion struct {
	Server   *httptest.Server
	CABundle string
	Mu       sync.Mutex // guards gate and arrived
	Gate     chan struct{}
	Arrived  chan struct{} // closed by the first call at the current gate
}

func (g *GatedConversion) Reset() {
	g.Mu.Lock()
	defer g.Mu.Unlock()
	g.Gate, g.Arrived = make(chan struct{}), make(chan struct{})
}

// Open lets the calls at the current gate, and those after, through
// until the next reset.
func (g *GatedConversion) Open() {
	g.Mu.Lock()
	defer g.Mu.Unlock()
	select {
	case <-g.Gate:
	default:
		close(g.Gate)
	}
}

func (g *GatedConversion) waitArrival(t *testing.T) {
	g.Mu.Lock()
	arrived := g.Arrived
	g.Mu.Unlock()
	select {
	case <-arrived:
	case <-Ctx(t).Done():
		t.Fatal("no conversion call arrived")
	}
}

// HeldRequest sends a request of the custom resource "wides" as user (a
// JSON body, if any), reads the dump of requests while the conversion
// webhook holds it, then lets it through and checks its status. It
// returns the dump and the request's row in it.
func (e *Env) HeldRequest(t *testing.T, wh *GatedConversion, method, path, body, user string, wantCode int) (dumpTable, []string) {
	t.Helper()
	wh.Reset()
	done := make(chan int, 1)
	go func() {
		req, _ := http.NewRequestWithContext(Ctx(t), method, e.URL+path, strings.NewReader(body))
		req.Header.Set("Impersonate-User", user)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := e.HTTPClient(t).Do(req)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	wh.waitArrival(t)
	d := e.APFDump(t, "dump_requests?includeRequestDetails=1")
	wh.Open()
	if code := <-done; code != wantCode {
		t.Fatalf("%s %s: %d, want %d", method, path, code, wantCode)
	}
	for _, row := range d.Rows {
		if d.Col(t, row, "UserName") == user && d.Col(t, row, "Resource") == "wides" {
			return d, row
		}
	}
	t.Fatalf("%s %s in flight is not in the dump", method, path)
	return d, nil
}
