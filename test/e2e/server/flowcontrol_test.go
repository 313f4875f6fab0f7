package server

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// blockingConversion is a conversion webhook that holds every call until
// released: a request that reads a custom resource at its other version
// keeps its seat for as long as the test wants, with no timing.
type blockingConversion struct {
	srv      *httptest.Server
	caBundle string
	arrived  atomic.Int64
	release  chan struct{}
	once     sync.Once
}

func newBlockingConversion(t *testing.T) *blockingConversion {
	b := &blockingConversion{release: make(chan struct{})}
	b.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review map[string]any
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		b.arrived.Add(1)
		select {
		case <-b.release:
		case <-r.Context().Done():
			return
		}
		answerConversion(w, review)
	}))
	t.Cleanup(b.srv.Close)
	t.Cleanup(b.open)
	b.caBundle = caBundleOf(b.srv)
	return b
}

func (b *blockingConversion) open() { b.once.Do(func() { close(b.release) }) }

// queueOf is the queue kube's shuffle sharding gives a flow with a hand
// of one: SHA-256 of "schema\x00user", little-endian, modulo the queues.
func queueOf(schema, user string, queues uint64) uint64 {
	sum := sha256.Sum256([]byte(schema + "\x00" + user))
	return binary.LittleEndian.Uint64(sum[:8]) % queues
}

// TestPriorityAndFairness: with a tiny concurrency budget, one user's
// flood of slow requests fills its level and gets 429 with Retry-After,
// while another user's request in the same level is queued, not
// rejected, and succeeds; system:masters is exempt throughout.
func TestPriorityAndFairness(t *testing.T) {
	e := e2eutil.Start(t, "--max-requests-inflight=2", "--max-mutating-requests-inflight=1",
		"--authorization-mode=AlwaysAllow", "--request-timeout=4m")
	ns := e.Namespace(t)
	wh := newBlockingConversion(t)
	e.CreateCRD(t, e2eutil.WebhookCRD(&e2eutil.ConversionWebhook{Server: wh.srv, CABundle: wh.caBundle}, "floods", "Flood", "/block"))
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "conv.example.com/v1", "kind": "Flood",
		"metadata": map[string]any{"name": "one"}, "spec": map[string]any{"name": "x"}}}
	if _, err := e2eutil.ConvResource(e.Dynamic(t), "floods", "v1", ns).Create(e2eutil.Ctx(t), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// One level of 1 to 3 seats (the suggested levels take most of the 3),
	// no lending or borrowing, 64 queues of 2, a hand of one queue.
	const schemaName = "e2e-flood"
	flooder, polite := "flooder", ""
	for _, u := range []string{"polite-1", "polite-2", "polite-3", "polite-4", "polite-5"} {
		if queueOf(schemaName, u, 64) != queueOf(schemaName, flooder, 64) {
			polite = u
			break
		}
	}
	pl := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: schemaName},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptrTo(int32(100)),
				LendablePercent: ptrTo(int32(0)), BorrowingLimitPercent: ptrTo(int32(0)),
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue,
					Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 64, HandSize: 1, QueueLengthLimit: 2}}}}}
	pl, err := e.Clientset.FlowcontrolV1().PriorityLevelConfigurations().Create(e2eutil.Ctx(t), pl, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fs := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: schemaName},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: schemaName},
			MatchingPrecedence:         500,
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{
					{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: flooder}},
					{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: polite}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"},
					Resources: []string{"*"}, Namespaces: []string{"*"}, ClusterScope: true}}}},
		}}
	fs, err = e.Clientset.FlowcontrolV1().FlowSchemas().Create(e2eutil.Ctx(t), fs, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	hc := e.HTTPClient(t)
	get := func(user, version string) (*http.Response, []byte, error) {
		req, _ := http.NewRequestWithContext(e2eutil.Ctx(t), http.MethodGet,
			e.URL+"/apis/conv.example.com/"+version+"/namespaces/"+ns+"/floods/one", nil)
		req.Header.Set("Impersonate-User", user)
		resp, err := hc.Do(req)
		if err != nil {
			return nil, nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp, body, err
	}
	// An ordinary answer names the schema and level, once the
	// controller has the new objects.
	e2eutil.Eventually(t, 30*time.Second, "requests classified into the new level", func(context.Context) (bool, error) {
		resp, _, err := get(polite, "v1")
		if err != nil || resp.StatusCode != http.StatusOK {
			return false, err
		}
		return resp.Header.Get("X-Kubernetes-PF-FlowSchema-UID") == string(fs.UID) &&
			resp.Header.Get("X-Kubernetes-PF-PriorityLevel-UID") == string(pl.UID), nil
	})

	// The flood: every request waits in the webhook, so the level's
	// seats and the flooder's queue fill and the rest are rejected.
	type result struct {
		code       int
		retryAfter string
		body       string
		fsUID      string
	}
	const flood = 12
	floodResults := make(chan result, flood)
	for range flood {
		go func() {
			resp, body, err := get(flooder, "v2")
			if err != nil {
				floodResults <- result{body: err.Error()}
				return
			}
			floodResults <- result{resp.StatusCode, resp.Header.Get("Retry-After"), string(body), resp.Header.Get("X-Kubernetes-PF-FlowSchema-UID")}
		}()
	}
	rejected := <-floodResults // at most 3 run and 2 wait: the rest are rejected at once
	if rejected.code != http.StatusTooManyRequests || rejected.retryAfter == "" ||
		rejected.body != "Too many requests, please try again later.\n" || rejected.fsUID != string(fs.UID) {
		t.Fatalf("a flood request while the level is full: %+v", rejected)
	}
	e2eutil.Eventually(t, 30*time.Second, "the flood holding seats", func(context.Context) (bool, error) {
		return wh.arrived.Load() >= 1, nil
	})

	// The admin is exempt: never queued or rejected, even now.
	for range 20 {
		if _, err := e.Clientset.CoreV1().Namespaces().Get(e2eutil.Ctx(t), ns, metav1.GetOptions{}); err != nil {
			t.Fatalf("an exempt request failed: %v", err)
		}
	}

	// The polite user's request goes to its own queue and waits there
	// for a seat rather than being rejected with the flooder's.
	politeDone := make(chan result, 1)
	go func() {
		resp, body, err := get(polite, "v1")
		if err != nil {
			politeDone <- result{body: err.Error()}
			return
		}
		politeDone <- result{code: resp.StatusCode, body: string(body)}
	}()
	// Release the flood only once the polite request is seen waiting in
	// its queue, so that the test always exercises the queue.
	e2eutil.Eventually(t, 30*time.Second, "the polite request waiting in a queue", func(context.Context) (bool, error) {
		d := e.APFDump(t, "dump_requests?includeRequestDetails=1")
		for _, row := range d.Rows {
			if d.Col(t, row, "PriorityLevelName") == schemaName && d.Col(t, row, "UserName") == polite &&
				d.Col(t, row, "QueueIndex") == strconv.FormatUint(queueOf(schemaName, polite, 64), 10) &&
				d.Col(t, row, "RequestIndexInQueue") == "0" && d.Col(t, row, "FlowDistingsher") == polite {
				return true, nil
			}
		}
		return false, nil
	})
	levels := e.APFDump(t, "dump_priority_levels")
	for _, row := range levels.Rows {
		if row[0] == schemaName && (levels.Col(t, row, "WaitingRequests") == "0" || levels.Col(t, row, "ActiveQueues") == "0") {
			t.Fatalf("the flood level shows nothing waiting: %v", row)
		}
	}
	wh.open()
	if r := <-politeDone; r.code != http.StatusOK {
		t.Fatalf("the polite user's request: %+v", r)
	}
	codes := map[int]int{rejected.code: 1}
	for range flood - 1 {
		r := <-floodResults
		codes[r.code]++
	}
	if codes[http.StatusOK] == 0 || codes[http.StatusOK] > 5 || codes[http.StatusTooManyRequests] < flood-5 {
		t.Fatalf("flood answers by code: %v", codes)
	}
}

func ptrTo[T any](v T) *T { return &v }

// answerConversion answers a ConversionReview by changing every object's
// apiVersion to the desired one: a None conversion done by a webhook.
func answerConversion(w http.ResponseWriter, review map[string]any) {
	req := review["request"].(map[string]any)
	var out []any
	for _, o := range req["objects"].([]any) {
		obj := o.(map[string]any)
		obj["apiVersion"] = req["desiredAPIVersion"]
		out = append(out, obj)
	}
	e2eutil.WriteJSON(w, map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
		"response": map[string]any{"uid": req["uid"], "convertedObjects": out, "result": map[string]any{"status": "Success"}}})
}

// caBundleOf is the base64 PEM of a test TLS server's certificate, as a
// CRD's caBundle holds it.
func caBundleOf(srv *httptest.Server) string {
	return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
}
