package server

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

func newGatedConversion(t *testing.T) *e2eutil.GatedConversion {
	g := &e2eutil.GatedConversion{}
	g.Reset()
	g.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review map[string]any
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		g.Mu.Lock()
		gate, arrived := g.Gate, g.Arrived
		select {
		case <-arrived:
		default:
			close(arrived)
		}
		g.Mu.Unlock()
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
		answerConversion(w, review)
	}))
	t.Cleanup(g.Server.Close)
	t.Cleanup(g.Open)
	g.CABundle = caBundleOf(g.Server)
	return g
}

// TestPriorityAndFairnessListWidth: a list of many stored objects takes
// more than one seat, as kube estimates it from the object count and
// average size of the resource's storage (read every
// --etcd-count-metric-poll-period); the dump of requests shows its seats
// while it is in flight.
func TestPriorityAndFairnessListWidth(t *testing.T) {
	e := e2eutil.Start(t, "--authorization-mode=AlwaysAllow", "--etcd-count-metric-poll-period=1s")
	ns := e.Namespace(t)
	wh := newGatedConversion(t)
	e.CreateCRD(t, e2eutil.WebhookCRD(&e2eutil.ConversionWebhook{Server: wh.Server, CABundle: wh.CABundle}, "wides", "Wide", "/gated"))
	// 40 objects of about 10kB: 400kB listed at once, 4 seats.
	res := e2eutil.ConvResource(e.Dynamic(t), "wides", "v1", ns)
	const objects = 40
	for i := range objects {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "conv.example.com/v1", "kind": "Wide",
			"metadata": map[string]any{"name": "w" + strconv.Itoa(i)}, "spec": map[string]any{"name": strings.Repeat("x", 10_000)}}}
		if _, err := res.Create(e2eutil.Ctx(t), obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// listSeats lists the objects at v2 as an ordinary user, holds the
	// list in the webhook, and reads its seats from the dump.
	listSeats := func() int {
		d, row := e.HeldRequest(t, wh, http.MethodGet, "/apis/conv.example.com/v2/namespaces/"+ns+"/wides", "", "lister", http.StatusOK)
		seats, _ := strconv.Atoi(d.Col(t, row, "InitialSeats"))
		return seats
	}
	// Each object is stored in a little over 10kB (its 10,000 bytes of
	// spec and its metadata, as JSON): 40 of them are ceil(40 * ~10.5kB /
	// 100kB) = 5 seats, below the level's maximum of 8 (global-default:
	// 15% of its 49 seats). The counts are read every second, so the
	// first lists may see fewer objects, or none.
	e2eutil.Eventually(t, 30*time.Second, "the list estimated at its size", func(context.Context) (bool, error) {
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
	e := e2eutil.Start(t, "--authorization-mode=AlwaysAllow")
	ns := e.Namespace(t)
	wh := newGatedConversion(t)
	e.CreateCRD(t, e2eutil.WebhookCRD(&e2eutil.ConversionWebhook{Server: wh.Server, CABundle: wh.CABundle}, "wides", "Wide", "/gated"))
	// The watches read the storage version: their events need no webhook.
	stored := e2eutil.ConvResource(e.Dynamic(t), "wides", "v1", ns)
	var watches []watch.Interface
	for range 25 {
		w, err := stored.Watch(e2eutil.Ctx(t), metav1.ListOptions{})
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
		d, row := e.HeldRequest(t, wh, http.MethodPost, "/apis/conv.example.com/v2/namespaces/"+ns+"/wides", body, "writer", http.StatusCreated)
		if got := d.Col(t, row, "InitialSeats"); got != "1" {
			t.Errorf("initial seats %s, want 1", got)
		}
		return d.Col(t, row, "FinalSeats"), d.Col(t, row, "AdditionalLatency")
	}
	if final, latency := createWidth("a"); final != "3" || latency != "5ms" {
		t.Errorf("with 25 watches: %s final seats for %s, want 3 for 5ms", final, latency)
	}
	// Watches end when their client stops them: the count follows.
	for _, w := range watches[:20] {
		w.Stop()
	}
	e2eutil.Eventually(t, 30*time.Second, "the ended watches no longer counted", func(context.Context) (bool, error) {
		final, latency := createWidth("b" + strconv.FormatInt(time.Now().UnixNano(), 36))
		t.Logf("%s final seats for %s", final, latency)
		return final == "0" && latency == "0s", nil
	})
}
