package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// gatedConversion is a conversion webhook whose calls wait at a gate: a
// request converting objects stays in flight until the test opens the
// gate; reset closes it again for the next request.
type gatedConversion struct {
	srv      *httptest.Server
	caBundle string
	mu       sync.Mutex // guards gate and arrived
	gate     chan struct{}
	arrived  chan struct{} // closed by the first call at the current gate
}

func newGatedConversion(t *testing.T) *gatedConversion {
	g := &gatedConversion{}
	g.reset()
	g.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review map[string]any
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		g.mu.Lock()
		gate, arrived := g.gate, g.arrived
		select {
		case <-arrived:
		default:
			close(arrived)
		}
		g.mu.Unlock()
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
		answerConversion(w, review)
	}))
	t.Cleanup(g.srv.Close)
	t.Cleanup(g.open)
	g.caBundle = caBundleOf(g.srv)
	return g
}

func (g *gatedConversion) reset() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gate, g.arrived = make(chan struct{}), make(chan struct{})
}

// open lets the calls at the current gate, and those after, through
// until the next reset.
func (g *gatedConversion) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.gate:
	default:
		close(g.gate)
	}
}

func (g *gatedConversion) waitArrival(t *testing.T) {
	g.mu.Lock()
	arrived := g.arrived
	g.mu.Unlock()
	select {
	case <-arrived:
	case <-ctx(t).Done():
		t.Fatal("no conversion call arrived")
	}
}

// heldRequest sends a request of the custom resource "wides" as user (a
// JSON body, if any), reads the dump of requests while the conversion
// webhook holds it, then lets it through and checks its status. It
// returns the dump and the request's row in it.
func (e *env) heldRequest(t *testing.T, wh *gatedConversion, method, path, body, user string, wantCode int) (dumpTable, []string) {
	t.Helper()
	wh.reset()
	done := make(chan int, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx(t), method, e.URL+path, strings.NewReader(body))
		req.Header.Set("Impersonate-User", user)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := e.httpClient(t).Do(req)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	wh.waitArrival(t)
	d := e.apfDump(t, "dump_requests?includeRequestDetails=1")
	wh.open()
	if code := <-done; code != wantCode {
		t.Fatalf("%s %s: %d, want %d", method, path, code, wantCode)
	}
	for _, row := range d.rows {
		if d.col(t, row, "UserName") == user && d.col(t, row, "Resource") == "wides" {
			return d, row
		}
	}
	t.Fatalf("%s %s in flight is not in the dump", method, path)
	return d, nil
}

// TestPriorityAndFairnessListWidth: a list of many stored objects takes
// more than one seat, as kube estimates it from the object count and
// average size of the resource's storage (read every
// --etcd-count-metric-poll-period); the dump of requests shows its seats
// while it is in flight.
func TestPriorityAndFairnessListWidth(t *testing.T) {
	e := start(t, "--authorization-mode=AlwaysAllow", "--etcd-count-metric-poll-period=1s")
	ns := e.namespace(t)
	wh := newGatedConversion(t)
	e.createCRD(t, webhookCRD(&conversionWebhook{srv: wh.srv, caBundle: wh.caBundle}, "wides", "Wide", "/gated"))
	// 40 objects of about 10kB: 400kB listed at once, 4 seats.
	res := convResource(e.dynamic(t), "wides", "v1", ns)
	const objects = 40
	for i := range objects {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "conv.example.com/v1", "kind": "Wide",
			"metadata": map[string]any{"name": "w" + strconv.Itoa(i)}, "spec": map[string]any{"name": strings.Repeat("x", 10_000)}}}
		if _, err := res.Create(ctx(t), obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// listSeats lists the objects at v2 as an ordinary user, holds the
	// list in the webhook, and reads its seats from the dump.
	listSeats := func() int {
		d, row := e.heldRequest(t, wh, http.MethodGet, "/apis/conv.example.com/v2/namespaces/"+ns+"/wides", "", "lister", http.StatusOK)
		seats, _ := strconv.Atoi(d.col(t, row, "InitialSeats"))
		return seats
	}
	// Each object is stored in a little over 10kB (its 10,000 bytes of
	// spec and its metadata, as JSON): 40 of them are ceil(40 * ~10.5kB /
	// 100kB) = 5 seats, below the level's maximum of 8 (global-default:
	// 15% of its 49 seats). The counts are read every second, so the
	// first lists may see fewer objects, or none.
	eventually(t, 30*time.Second, "the list estimated at its size", func(context.Context) (bool, error) {
		seats := listSeats()
		t.Logf("a list of %d objects: %d seats", objects, seats)
		return seats == 5, nil
	})
}

// TestPriorityAndFairnessWriteWidth: a write to a resource that many
// watches follow is charged, as in kube, for the events it will send:
// with 25 watches of the resource, a create holds 3 final seats that
// linger 5ms after it; the dump of requests shows them while the create
// is in flight (held in the conversion webhook). A watch that ended no
// longer counts.
func TestPriorityAndFairnessWriteWidth(t *testing.T) {
	e := start(t, "--authorization-mode=AlwaysAllow")
	ns := e.namespace(t)
	wh := newGatedConversion(t)
	e.createCRD(t, webhookCRD(&conversionWebhook{srv: wh.srv, caBundle: wh.caBundle}, "wides", "Wide", "/gated"))
	// The watches read the storage version: their events need no webhook.
	stored := convResource(e.dynamic(t), "wides", "v1", ns)
	var watches []watch.Interface
	for range 25 {
		w, err := stored.Watch(ctx(t), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		watches = append(watches, w)
	}

	// createWidth creates an object at v2 as an ordinary user, holds the
	// create in the webhook, and reads its width from the dump.
	createWidth := func(name string) (final, latency string) {
		body := `{"apiVersion":"conv.example.com/v2","kind":"Wide","metadata":{"name":"` + name + `"},"spec":{"fullName":"x"}}`
		d, row := e.heldRequest(t, wh, http.MethodPost, "/apis/conv.example.com/v2/namespaces/"+ns+"/wides", body, "writer", http.StatusCreated)
		if got := d.col(t, row, "InitialSeats"); got != "1" {
			t.Errorf("initial seats %s, want 1", got)
		}
		return d.col(t, row, "FinalSeats"), d.col(t, row, "AdditionalLatency")
	}
	if final, latency := createWidth("a"); final != "3" || latency != "5ms" {
		t.Errorf("with 25 watches: %s final seats for %s, want 3 for 5ms", final, latency)
	}
	// Watches end when their client stops them: the count follows.
	for _, w := range watches[:20] {
		w.Stop()
	}
	eventually(t, 30*time.Second, "the ended watches no longer counted", func(context.Context) (bool, error) {
		final, latency := createWidth("b" + strconv.FormatInt(time.Now().UnixNano(), 36))
		t.Logf("%s final seats for %s", final, latency)
		return final == "0" && latency == "0s", nil
	})
}
