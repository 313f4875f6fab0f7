package kubectl

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/client-go/kubernetes"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/capstan-io/capstan/internal/testkit"
)

// auditPolicy audits configmaps with their objects, pods without their
// RequestReceived stage, secrets and the server's own requests not at all,
// and the rest at Metadata.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/livez*", "/readyz*", "/version", "/openapi*", "/api", "/api/*", "/apis*"]
- level: None
  users: ["system:apiserver"]
- level: None
  resources: [{group: "", resources: ["secrets"]}]
- level: RequestResponse
  resources: [{group: "", resources: ["configmaps"]}]
- level: Metadata
  resources: [{group: "", resources: ["pods"]}]
  omitStages: ["RequestReceived"]
- level: Metadata
`

func TestAuditLog(t *testing.T) {
	testkit.Kubectl(t)
	dir := t.TempDir()
	policy, logPath := filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "audit", "audit.log")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	s := testkit.StartServer(t, "--audit-policy-file="+policy, "--audit-log-path="+logPath)

	mustContain(t, run(t, s, "", "create", "configmap", "cm1", "--from-literal=a=b"), "configmap/cm1 created")
	mustContain(t, run(t, s, "", "get", "configmap", "cm1", "-o", "name"), "configmap/cm1")
	// The server ends the watch after a second: its ResponseComplete.
	_, _, _ = testkit.RunKubectl(t, s.Kubeconfig, nil, "get", "configmaps", "--watch-only", "--request-timeout=1s")
	mustContain(t, fail(t, s, "get", "pods", "--as=alice"), "Forbidden")
	mustContain(t, run(t, s, "", "create", "secret", "generic", "s1", "--from-literal=k=v"), "secret/s1 created")
	mustContain(t, run(t, s, "", "delete", "configmap", "cm1"), "deleted")

	// client-go: an Audit-ID of the client's choice, and one the server picks.
	headers := &auditIDs{}
	cfg := rest.CopyConfig(s.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return headers.recorder(rt) })
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.WithValue(context.Background(), ctxAuditID{}, "my-audit-id")
	if _, err := client.CoreV1().ConfigMaps("default").Get(ctx, "cm1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get of a deleted configmap: %v", err)
	}
	if _, err := client.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	s.Stop(t)

	events := readAuditLog(t, logPath)
	for _, ev := range events {
		if ev.ObjectRef != nil && ev.ObjectRef.Resource == "secrets" {
			t.Errorf("a None rule's request was audited: %s %s", ev.Verb, ev.RequestURI)
		}
		if ev.User.Username == "system:apiserver" || strings.HasPrefix(ev.RequestURI, "/readyz") {
			t.Errorf("a None rule's request was audited: %s %s by %s", ev.Verb, ev.RequestURI, ev.User.Username)
		}
		if ev.StageTimestamp.Before(&ev.RequestReceivedTimestamp) {
			t.Errorf("event %s at %s stamped before it was received", ev.AuditID, ev.Stage)
		}
		if ev.Level == auditv1.LevelMetadata && (ev.RequestObject != nil || ev.ResponseObject != nil) {
			t.Errorf("Metadata event %s %s has objects", ev.Verb, ev.RequestURI)
		}
	}

	create := eventsOf(events, "create", "configmaps")
	checkStages(t, "create", create, auditv1.StageRequestReceived, auditv1.StageResponseComplete)
	done := create[len(create)-1]
	want := auditv1.ObjectReference{Resource: "configmaps", Namespace: "default", Name: "cm1", APIVersion: "v1"}
	if done.Level != auditv1.LevelRequestResponse || done.ObjectRef == nil || *done.ObjectRef != want {
		t.Errorf("create: level %s, objectRef %+v; want RequestResponse, %+v", done.Level, done.ObjectRef, want)
	}
	if done.ResponseStatus == nil || done.ResponseStatus.Code != http.StatusCreated {
		t.Errorf("create: responseStatus %+v, want 201", done.ResponseStatus)
	}
	checkDecision(t, "create", done, "allow")
	var sent, stored corev1.ConfigMap
	decodeObject(t, done.RequestObject, &sent)
	decodeObject(t, done.ResponseObject, &stored)
	if sent.Data["a"] != "b" || sent.UID != "" || stored.Data["a"] != "b" || stored.UID == "" || stored.APIVersion != "v1" {
		t.Errorf("create: request object %+v, response object %+v", sent, stored)
	}

	get := eventsOf(events, "get", "configmaps")
	checkStages(t, "get", get[:2], auditv1.StageRequestReceived, auditv1.StageResponseComplete)
	if get[1].ResponseStatus.Code != http.StatusOK {
		t.Errorf("get: responseStatus %+v, want 200", get[1].ResponseStatus)
	}
	// The client's Audit-ID is the request's audit ID, in the log and in
	// the response.
	notFound := withAuditID(events, "my-audit-id")
	checkStages(t, "not found", notFound, auditv1.StageRequestReceived, auditv1.StageResponseComplete)
	if st := notFound[1].ResponseStatus; st.Code != http.StatusNotFound || st.Reason != metav1.StatusReasonNotFound || st.Details == nil || st.Details.Name != "cm1" {
		t.Errorf("not found: responseStatus %+v, want kube's Status", st)
	}
	if got := headers.get("/api/v1/namespaces/default/configmaps/cm1"); got != "my-audit-id" {
		t.Errorf("the response's Audit-ID is %q, want the client's", got)
	}

	watch := eventsOf(events, "watch", "configmaps")
	checkStages(t, "watch", watch, auditv1.StageRequestReceived, auditv1.StageResponseStarted, auditv1.StageResponseComplete)
	if watch[len(watch)-1].ResponseObject != nil {
		t.Error("a watch's events were recorded as its response object")
	}

	// omitStages: no RequestReceived for pods.
	pods := eventsOf(events, "list", "pods")
	checkStages(t, "forbidden list", pods, auditv1.StageResponseComplete)
	forbidden := pods[0]
	if forbidden.ResponseStatus.Code != http.StatusForbidden || forbidden.ResponseStatus.Reason != metav1.StatusReasonForbidden ||
		!strings.Contains(forbidden.ResponseStatus.Message, `User "alice" cannot list resource "pods"`) {
		t.Errorf("forbidden: responseStatus %+v", forbidden.ResponseStatus)
	}
	if forbidden.ImpersonatedUser == nil || forbidden.ImpersonatedUser.Username != "alice" || forbidden.User.Username != "admin" {
		t.Errorf("forbidden: user %+v as %+v, want admin as alice", forbidden.User, forbidden.ImpersonatedUser)
	}
	checkDecision(t, "forbidden", forbidden, "forbid")

	del := eventsOf(events, "delete", "configmaps")
	checkStages(t, "delete", del, auditv1.StageRequestReceived, auditv1.StageResponseComplete)
	if st := del[1].ResponseStatus; st.Code != http.StatusOK || st.Status != metav1.StatusSuccess {
		t.Errorf("delete: responseStatus %+v", st)
	}

	// The Audit-ID the server picks is the audit ID of the events.
	list := withAuditID(events, headers.get("/api/v1/namespaces"))
	checkStages(t, "list of namespaces", list, auditv1.StageRequestReceived, auditv1.StageResponseComplete)
	if list[0].Verb != "list" || list[0].ObjectRef.Resource != "namespaces" {
		t.Errorf("the events of the list's Audit-ID are a %s of %s", list[0].Verb, list[0].ObjectRef.Resource)
	}
	ids := map[string]bool{}
	for _, ev := range events {
		if ev.Stage == auditv1.StageResponseComplete {
			if ids[string(ev.AuditID)] {
				t.Errorf("audit ID %s completed twice", ev.AuditID)
			}
			ids[string(ev.AuditID)] = true
		}
	}
}

// readAuditLog decodes every line of the log as an audit.k8s.io/v1 Event.
func readAuditLog(t *testing.T, path string) []*auditv1.Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var events []*auditv1.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		obj, gvk, err := auditDecoder.Decode(sc.Bytes(), nil, nil)
		ev, ok := obj.(*auditv1.Event)
		if err != nil || !ok {
			t.Fatalf("line %q is not an audit.k8s.io/v1 Event (%v): %v", sc.Text(), gvk, err)
		}
		events = append(events, ev)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return events
}

var auditDecoder = func() runtime.Decoder {
	s := runtime.NewScheme()
	if err := auditv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return serializer.NewCodecFactory(s).UniversalDeserializer()
}()

func eventsOf(events []*auditv1.Event, verb, resource string) []*auditv1.Event {
	var out []*auditv1.Event
	for _, ev := range events {
		if ev.Verb == verb && ev.ObjectRef != nil && ev.ObjectRef.Resource == resource && ev.User.Username == "admin" {
			out = append(out, ev)
		}
	}
	return out
}

func withAuditID(events []*auditv1.Event, id string) []*auditv1.Event {
	var out []*auditv1.Event
	for _, ev := range events {
		if string(ev.AuditID) == id {
			out = append(out, ev)
		}
	}
	return out
}

func checkStages(t *testing.T, what string, events []*auditv1.Event, want ...auditv1.Stage) {
	t.Helper()
	var got []auditv1.Stage
	for _, ev := range events {
		got = append(got, ev.Stage)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s: stages %v, want %v", what, got, want)
	}
	for _, ev := range events {
		if ev.AuditID != events[0].AuditID {
			t.Fatalf("%s: the stages of one request have audit IDs %s and %s", what, events[0].AuditID, ev.AuditID)
		}
	}
}

func checkDecision(t *testing.T, what string, ev *auditv1.Event, decision string) {
	t.Helper()
	if got := ev.Annotations["authorization.k8s.io/decision"]; got != decision {
		t.Errorf("%s: authorization decision %q, want %q", what, got, decision)
	}
	if _, ok := ev.Annotations["authorization.k8s.io/reason"]; !ok {
		t.Errorf("%s: no authorization reason annotation", what)
	}
}

func decodeObject(t *testing.T, raw *runtime.Unknown, into runtime.Object) {
	t.Helper()
	if raw == nil {
		t.Fatal("no object recorded")
	}
	if err := runtime.DecodeInto(clientscheme.Codecs.UniversalDeserializer(), raw.Raw, into); err != nil {
		t.Fatalf("recorded object %s: %v", raw.Raw, err)
	}
}

// auditIDs records the Audit-ID header of each response by path, and
// sends the Audit-ID a request's context asks for.
type auditIDs struct {
	mu     sync.Mutex // guards byPath
	byPath map[string]string
}

type ctxAuditID struct{}

func (a *auditIDs) recorder(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		if id, ok := r.Context().Value(ctxAuditID{}).(string); ok {
			r = r.Clone(r.Context())
			r.Header.Set("Audit-ID", id)
		}
		resp, err := rt.RoundTrip(r)
		if err == nil {
			a.mu.Lock()
			if a.byPath == nil {
				a.byPath = map[string]string{}
			}
			a.byPath[r.URL.Path] = resp.Header.Get("Audit-ID")
			a.mu.Unlock()
		}
		return resp, err
	})
}

func (a *auditIDs) get(path string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.byPath[path]
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
