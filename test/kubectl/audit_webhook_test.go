package kubectl

import (
	"context"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/capstan-io/capstan/internal/testkit"
)

// auditReceiver is an audit webhook: a TLS server that keeps the
// audit.k8s.io/v1 EventLists POSTed to it.
type auditReceiver struct {
	*httptest.Server
	t      *testing.T
	mu     sync.Mutex
	events []*auditv1.Event
	bad    []string // what was not a POST of an EventList
}

func newAuditReceiver(t *testing.T) *auditReceiver {
	r := &auditReceiver{t: t}
	r.Server = httptest.NewTLSServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *auditReceiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	obj, _, decodeErr := auditDecoder.Decode(body, nil, nil)
	list, ok := obj.(*auditv1.EventList)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case err != nil || decodeErr != nil || !ok:
		r.bad = append(r.bad, string(body))
	case req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/json":
		r.bad = append(r.bad, req.Method+" "+req.Header.Get("Content-Type"))
	default:
		for i := range list.Items {
			r.events = append(r.events, &list.Items[i])
		}
	}
	w.WriteHeader(http.StatusOK)
}

// kubeconfig writes the webhook's kubeconfig: its URL and its CA.
func (r *auditReceiver) kubeconfig() string {
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate().Raw})
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["audit"] = &clientcmdapi.Cluster{Server: r.URL + "/audit", CertificateAuthorityData: caPEM}
	cfg.AuthInfos["apiserver"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["audit"] = &clientcmdapi.Context{Cluster: "audit", AuthInfo: "apiserver"}
	cfg.CurrentContext = "audit"
	path := filepath.Join(r.t.TempDir(), "audit-webhook.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		r.t.Fatal(err)
	}
	return path
}

func (r *auditReceiver) received() ([]*auditv1.Event, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.events, r.bad
}

// TestAuditWebhook: with --audit-webhook-config-file, the events of a
// kubectl and a client-go request reach the webhook as EventLists, in each
// mode; batches still buffered are sent when the server stops.
func TestAuditWebhook(t *testing.T) {
	testkit.Kubectl(t)
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"blocking", "batch"} {
		t.Run(mode, func(t *testing.T) {
			recv := newAuditReceiver(t)
			s := testkit.StartServer(t, "--audit-policy-file="+policy,
				"--audit-webhook-config-file="+recv.kubeconfig(), "--audit-webhook-mode="+mode)
			mustContain(t, run(t, s, "", "create", "configmap", "hooked", "--from-literal=a=b"), "configmap/hooked created")
			client := kubernetes.NewForConfigOrDie(s.Config)
			if _, err := client.CoreV1().ConfigMaps("default").Get(context.Background(), "missing", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Fatalf("get of a missing configmap: %v", err)
			}
			s.Stop(t)

			events, bad := recv.received()
			if len(bad) > 0 {
				t.Fatalf("the webhook got requests that are not EventLists: %q", bad)
			}
			create := eventsOf(events, "create", "configmaps")
			checkStages(t, "create", create, auditv1.StageRequestReceived, auditv1.StageResponseComplete)
			done := create[len(create)-1]
			if done.Level != auditv1.LevelRequestResponse || done.ObjectRef.Name != "hooked" ||
				done.ResponseStatus.Code != http.StatusCreated || done.RequestObject == nil || done.ResponseObject == nil {
				t.Errorf("create: %+v", done)
			}
			var get []*auditv1.Event
			for _, ev := range eventsOf(events, "get", "configmaps") {
				if ev.ObjectRef.Name == "missing" {
					get = append(get, ev)
				}
			}
			checkStages(t, "get", get, auditv1.StageRequestReceived, auditv1.StageResponseComplete)
			if st := get[len(get)-1].ResponseStatus; st.Code != http.StatusNotFound {
				t.Errorf("get: responseStatus %+v, want 404", st)
			}
		})
	}
}

// TestAuditPolicyFileErrors: capstan does not start with a policy file it
// cannot read or use, and says why in kube-apiserver's words.
func TestAuditPolicyFileErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	badLevel := write("level.yaml", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Loud\n")
	badYAML := write("yaml.yaml", "not: [yaml\n")
	missing := filepath.Join(dir, "missing.yaml")
	for _, tc := range []struct{ path, want string }{
		{badLevel, `loading audit policy file: rules[0].level: Unsupported value: "Loud": supported values: "None", "Metadata", "Request", "RequestResponse": from file ` + badLevel},
		{badYAML, `loading audit policy file: failed decoding: yaml: line 1: did not find expected ',' or ']': from file ` + badYAML},
		{missing, `loading audit policy file: failed to read file path "` + missing + `": open ` + missing + `: no such file or directory`},
	} {
		if err := testkit.StartError(t, "--audit-policy-file="+tc.path); err == nil || err.Error() != tc.want {
			t.Errorf("--audit-policy-file=%s:\ngot  %v\nwant %s", filepath.Base(tc.path), err, tc.want)
		}
	}
}
