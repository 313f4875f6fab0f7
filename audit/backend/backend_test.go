package backend

import (
	"bytes"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/capstan-io/capstan/audit"
)

var decoder = func() runtime.Decoder {
	s := runtime.NewScheme()
	if err := auditv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return serializer.NewCodecFactory(s).UniversalDeserializer()
}()

func event(id string) *auditv1.Event {
	return &auditv1.Event{AuditID: types.UID(id), Level: auditv1.LevelMetadata, Stage: auditv1.StageResponseComplete, Verb: "get"}
}

// receiver is an audit webhook that records the EventLists it receives,
// failing the first failures requests with 500.
type receiver struct {
	mu       sync.Mutex // guards the fields below
	failures int
	lists    [][]string // audit IDs of each list received
	tries    int
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.tries++
	if rc.failures > 0 {
		rc.failures--
		http.Error(w, "try again", http.StatusInternalServerError)
		return
	}
	obj, gvk, err := decoder.Decode(body, nil, nil)
	if err != nil || r.URL.Path != "/audit" || r.Method != http.MethodPost {
		http.Error(w, fmt.Sprintf("%s %s: %v", r.Method, r.URL.Path, err), http.StatusBadRequest)
		return
	}
	list, ok := obj.(*auditv1.EventList)
	if !ok {
		http.Error(w, "not an EventList: "+gvk.String(), http.StatusBadRequest)
		return
	}
	var ids []string
	for _, ev := range list.Items {
		ids = append(ids, string(ev.AuditID))
	}
	rc.lists = append(rc.lists, ids)
}

func (rc *receiver) received() (lists [][]string, tries int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.lists), rc.tries
}

// startReceiver serves rc over TLS and returns a kubeconfig that reaches it.
func startReceiver(t *testing.T, rc *receiver) string {
	srv := httptest.NewTLSServer(rc)
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, ca, 0o600); err != nil {
		t.Fatal(err)
	}
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: audit
  cluster: {server: "%s/audit", certificate-authority: "%s"}
contexts:
- name: audit
  context: {cluster: audit, user: ""}
current-context: audit
`, srv.URL, caFile)
	path := filepath.Join(t.TempDir(), "webhook.kubeconfig")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestWebhookSendsEventListsAndRetries(t *testing.T) {
	rc := &receiver{failures: 2}
	w, err := NewWebhook(startReceiver(t, rc), time.Millisecond, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if !w.ProcessEvents(event("a"), event("b")) {
		t.Fatal("the webhook reported a failure after retrying")
	}
	lists, tries := rc.received()
	if tries != 3 || len(lists) != 1 || !slices.Equal(lists[0], []string{"a", "b"}) {
		t.Fatalf("received %v in %d tries, want [[a b]] in 3", lists, tries)
	}
}

func TestWebhookGivesUpAfterFiveTries(t *testing.T) {
	rc := &receiver{failures: 100}
	w, err := NewWebhook(startReceiver(t, rc), time.Millisecond, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if w.ProcessEvents(event("a")) {
		t.Fatal("the webhook reported success though every try failed")
	}
	if _, tries := rc.received(); tries != 5 {
		t.Fatalf("%d tries, want kube's 5", tries)
	}
}

func TestBufferedWebhookBatches(t *testing.T) {
	rc := &receiver{}
	w, err := NewWebhook(startReceiver(t, rc), time.Millisecond, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	c := DefaultWebhookBatch
	c.MaxBatchSize, c.MaxBatchWait = 3, time.Hour
	b, err := WithMode(w, ModeBatch, c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	b.Run(t.Context())
	var want []string
	for i := range 7 {
		id := fmt.Sprint(i)
		want = append(want, id)
		ev := event(id)
		b.ProcessEvents(ev)
		ev.AuditID = "changed" // the request reuses its event: the buffer must have copied it
	}
	b.Shutdown() // delivers the last, partial batch
	lists, _ := rc.received()
	var got []string
	for _, l := range lists {
		if len(l) > 3 {
			t.Errorf("a batch of %d events, more than the maximum of 3", len(l))
		}
		got = append(got, l...)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) || len(lists) != 3 {
		t.Fatalf("received %v, want the events %v in 3 batches", lists, want)
	}
}

func TestBufferedDeliversAfterMaxWait(t *testing.T) {
	rc := &receiver{}
	w, err := NewWebhook(startReceiver(t, rc), time.Millisecond, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	c := DefaultWebhookBatch
	c.MaxBatchWait = 10 * time.Millisecond
	b := NewBuffered(w, c, slog.New(slog.DiscardHandler))
	b.Run(t.Context())
	defer b.Shutdown()
	b.ProcessEvents(event("lonely"))
	// The batch is far from full: only the wait sends it.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if lists, _ := rc.received(); len(lists) == 1 {
			if !slices.Equal(lists[0], []string{"lonely"}) {
				t.Fatalf("received %v", lists)
			}
			return
		}
	}
	t.Fatal("the lonely event was not sent within 30s")
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }
func (failingWriter) Close() error              { return nil }

func TestModes(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	failing, _ := NewLog(failingWriter{}, FormatJSON, quiet)
	for mode, want := range map[string]bool{ModeBlocking: true, ModeBlockingStrict: false} {
		b, err := WithMode(failing, mode, DefaultLogBatch, quiet)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.ProcessEvents(event("a")); got != want {
			t.Errorf("%s: a failed write reports %v, want %v", mode, got, want)
		}
	}
	if _, err := WithMode(failing, "sometimes", DefaultLogBatch, quiet); err == nil {
		t.Error("an unknown mode was accepted")
	}
}

type bufferCloser struct{ bytes.Buffer }

func (*bufferCloser) Close() error { return nil }

func TestLogFormats(t *testing.T) {
	ev := event("id-1")
	ev.RequestURI = "/api/v1/pods"
	ev.User.Username, ev.User.Groups = "alice", []string{"devs", "system:authenticated"}
	ev.SourceIPs = []string{"10.0.0.1"}
	ev.UserAgent = "kubectl"
	var out bufferCloser
	l, err := NewLog(&out, FormatLegacy, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	l.ProcessEvents(ev)
	want := `0001-01-01T00:00:00Z AUDIT: id="id-1" stage="ResponseComplete" ip="10.0.0.1" method="get" user="alice" groups="\"devs\",\"system:authenticated\"" as="<self>" asgroups="<lookup>" user-agent="kubectl" namespace="<none>" uri="/api/v1/pods" response="<deferred>"` + "\n"
	if out.String() != want {
		t.Errorf("legacy line\n%s\nwant\n%s", out.String(), want)
	}
	out.Reset()
	if l, err = NewLog(&out, FormatJSON, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	l.ProcessEvents(ev, ev)
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines for 2 events:\n%s", len(lines), out.String())
	}
	obj, _, err := decoder.Decode([]byte(lines[0]), nil, nil)
	if got, ok := obj.(*auditv1.Event); err != nil || !ok || got.AuditID != "id-1" || got.User.Username != "alice" {
		t.Fatalf("line %s decodes to %#v, %v", lines[0], obj, err)
	}
	if _, err := NewLog(&out, "xml", nil); err == nil {
		t.Error("an unknown format was accepted")
	}
}

func TestLogFileRotates(t *testing.T) {
	dir := t.TempDir()
	f := LogFile{Path: filepath.Join(dir, "sub", "audit.log"), MaxSizeMB: 1, MaxBackups: 2}
	out, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(f.Path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the log file is not created with mode 0600 at open: %v, %v", st, err)
	}
	l, _ := NewLog(out, FormatJSON, slog.New(slog.DiscardHandler))
	ev := event("x")
	ev.RequestURI = "/" + strings.Repeat("a", 100*1024)
	for range 25 { // 2.5 MB: two rotations
		if !l.ProcessEvents(ev) {
			t.Fatal("write failed")
		}
	}
	l.Shutdown()
	files, _ := filepath.Glob(filepath.Join(dir, "sub", "audit*.log"))
	if len(files) != 3 {
		t.Fatalf("files %v, want the log and 2 rotated ones", files)
	}
}

var _ audit.Backend = (*Buffered)(nil)
var _ audit.Backend = (*Webhook)(nil)
var _ audit.Backend = (*Log)(nil)
