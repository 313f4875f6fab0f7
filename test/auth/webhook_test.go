package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/pflag"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/app"
	"github.com/capstan-io/capstan/internal/testkit"
)

// sarServer is a webhook authorizer over TLS: it allows "allowed-*" users,
// denies "denied-*" ones, fails for "broken-*" ones and has no opinion on
// the others; it counts the reviews it gets per user.
type sarServer struct {
	*httptest.Server
	version string
	mu      sync.Mutex
	asked   map[string]int
}

func newSARServer(t *testing.T, version string) *sarServer {
	s := &sarServer{version: version, asked: map[string]int{}}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *sarServer) serve(w http.ResponseWriter, r *http.Request) {
	var review struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Spec       struct {
			User   string   `json:"user"`
			Groups []string `json:"groups"`
			Group  []string `json:"group"` // v1beta1
		} `json:"spec"`
	}
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.APIVersion != "authorization.k8s.io/"+s.version || review.Kind != "SubjectAccessReview" {
		http.Error(w, fmt.Sprintf("bad review %+v: %v", review, err), http.StatusBadRequest)
		return
	}
	user := review.Spec.User
	s.mu.Lock()
	s.asked[user]++
	s.mu.Unlock()
	var status authorizationv1.SubjectAccessReviewStatus
	switch {
	case strings.HasPrefix(user, "allowed-"):
		status.Allowed = true
	case strings.HasPrefix(user, "denied-"):
		status.Denied, status.Reason = true, "the webhook says no"
	case strings.HasPrefix(user, "broken-"):
		http.Error(w, "boom", http.StatusForbidden)
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"apiVersion": review.APIVersion, "kind": "SubjectAccessReview", "status": status})
}

func (s *sarServer) count(user string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked[user]
}

// kubeconfig writes a kubeconfig that reaches the server.
func (s *sarServer) kubeconfig(t *testing.T) string {
	t.Helper()
	return testkit.WebhookKubeconfig(t, t.TempDir(), "webhook.kubeconfig", s.URL, testkit.CertificatePEM(s.Server))
}

// TestWebhookAuthorizer: --authorization-mode=Webhook,RBAC asks the
// webhook, caches its answers, and on failure has no opinion (NoOpinion is
// the legacy flags' failure policy), so RBAC decides.
func TestWebhookAuthorizer(t *testing.T) {
	for _, version := range []string{"v1", "v1beta1"} {
		t.Run(version, func(t *testing.T) {
			hook := newSARServer(t, version)
			s := testkit.StartServer(t, "--authorization-mode=Webhook,RBAC", "--authorization-webhook-config-file="+hook.kubeconfig(t),
				"--authorization-webhook-version="+version)
			allowed := newUser(t, s, "allowed-ann")
			for range 3 {
				if _, err := allowed.client.CoreV1().ConfigMaps("default").List(ctx(t), metav1.ListOptions{}); err != nil {
					t.Fatalf("allowed user: %v", err)
				}
			}
			if n := hook.count("allowed-ann"); n != 1 {
				t.Errorf("the webhook was asked %d times about one request, want 1 (cached)", n)
			}
			denied := newUser(t, s, "denied-dan")
			_, err := denied.client.CoreV1().ConfigMaps("default").List(ctx(t), metav1.ListOptions{})
			wantForbidden(t, "denied user", err,
				`configmaps is forbidden: User "denied-dan" cannot list resource "configmaps" in API group "" in the namespace "default": the webhook says no`)
			broken := newUser(t, s, "broken-bob")
			_, err = broken.client.CoreV1().ConfigMaps("default").List(ctx(t), metav1.ListOptions{})
			if !apierrors.IsForbidden(err) {
				t.Errorf("broken webhook: %v, want forbidden", err)
			}
			// system:masters never reaches the webhook.
			if _, err := s.Client(t).CoreV1().ConfigMaps("default").List(ctx(t), metav1.ListOptions{}); err != nil {
				t.Errorf("admin: %v", err)
			}
		})
	}
}

// TestAuthorizationConfig: an AuthorizationConfiguration of Node, RBAC and
// a webhook with a match condition and failure policy Deny.
func TestAuthorizationConfig(t *testing.T) {
	hook := newSARServer(t, "v1")
	config := fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: AuthorizationConfiguration
authorizers:
- type: Node
  name: node
- type: RBAC
  name: rbac
- type: Webhook
  name: hook.example.com
  webhook:
    timeout: 5s
    subjectAccessReviewVersion: v1
    matchConditionSubjectAccessReviewVersion: v1
    failurePolicy: Deny
    connectionInfo:
      type: KubeConfigFile
      kubeConfigFile: %s
    matchConditions:
    - expression: has(request.resourceAttributes) && request.resourceAttributes.namespace == 'kube-public'
`, hook.kubeconfig(t))
	path := filepath.Join(t.TempDir(), "authz.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	s := testkit.StartServer(t, "--authorization-config="+path)
	allowed := newUser(t, s, "allowed-amy")
	if _, err := allowed.client.CoreV1().ConfigMaps("kube-public").List(ctx(t), metav1.ListOptions{}); err != nil {
		t.Errorf("in the matched namespace: %v", err)
	}
	_, err := allowed.client.CoreV1().ConfigMaps("default").List(ctx(t), metav1.ListOptions{})
	wantForbidden(t, "outside the match condition", err,
		`configmaps is forbidden: User "allowed-amy" cannot list resource "configmaps" in API group "" in the namespace "default"`)
	if n := hook.count("allowed-amy"); n != 1 {
		t.Errorf("webhook asked %d times, want 1 (only in kube-public)", n)
	}
	// failurePolicy Deny: a failing webhook denies.
	broken := newUser(t, s, "broken-bea")
	_, err = broken.client.CoreV1().ConfigMaps("kube-public").List(ctx(t), metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("broken webhook: %v, want forbidden", err)
	}
	// Node and RBAC still decide first: a kubelet reads its own Node.
	node := newUser(t, s, "system:node:n9", "system:nodes")
	_, err = node.client.CoreV1().Nodes().Get(ctx(t), "n8", metav1.GetOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "node: node 'n9' cannot read 'n8', only its own Node object") {
		t.Errorf("node: %v", err)
	}
}

// TestABAC: --authorization-mode=ABAC with a policy file of both versions.
func TestABAC(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.jsonl")
	policy := `# readers
{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "reader", "namespace": "default", "resource": "configmaps", "apiGroup": "", "readonly": true}}
{"user": "writer", "namespace": "default"}
`
	if err := os.WriteFile(path, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	s := testkit.StartServer(t, "--authorization-mode=ABAC", "--authorization-policy-file="+path)
	reader := newUser(t, s, "reader")
	if _, err := reader.client.CoreV1().ConfigMaps("default").List(ctx(t), metav1.ListOptions{}); err != nil {
		t.Errorf("reader list: %v", err)
	}
	_, err := reader.client.CoreV1().ConfigMaps("default").Create(ctx(t), configMap("c"), metav1.CreateOptions{})
	wantForbidden(t, "reader create", err,
		`configmaps is forbidden: User "reader" cannot create resource "configmaps" in API group "" in the namespace "default": abac: No policy matched.`)
	_, err = reader.client.CoreV1().ConfigMaps("kube-system").List(ctx(t), metav1.ListOptions{})
	wantForbidden(t, "reader in another namespace", err,
		`configmaps is forbidden: User "reader" cannot list resource "configmaps" in API group "" in the namespace "kube-system": abac: No policy matched.`)
	writer := newUser(t, s, "writer")
	if _, err := writer.client.CoreV1().ConfigMaps("default").Create(ctx(t), configMap("w"), metav1.CreateOptions{}); err != nil {
		t.Errorf("writer create: %v", err)
	}
}

func configMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// TestAuthorizationFlagErrors: bad authorization flags and files stop the
// start with kube's errors.
func TestAuthorizationFlagErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badPolicy := write("bad.jsonl", "{\"user\":\n")
	goodConfig := write("good.yaml", "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- {type: RBAC, name: rbac}\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--authorization-mode=ABAC"}, "authorization-mode ABAC's authorization policy file not passed"},
		{[]string{"--authorization-mode=Webhook"}, "authorization-mode Webhook's authorization config file not passed"},
		{[]string{"--authorization-policy-file=" + badPolicy}, "cannot specify --authorization-policy-file without mode ABAC"},
		{[]string{"--authorization-mode=RBAC", "--authorization-config=" + goodConfig}, "--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined"},
		{[]string{"--authorization-mode=ABAC", "--authorization-policy-file=" + badPolicy}, "error reading policy file " + badPolicy + ", line 1"},
		{[]string{"--authorization-config=" + write("kind.yaml", "apiVersion: v1\nkind: Pod\n")}, `failed to load AuthorizationConfiguration from file: no kind "Pod" is registered for version "v1"`},
		{[]string{"--authorization-config=" + write("unknown.yaml", "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- {type: RBAC, name: rbac, color: red}\n")}, `unknown field "authorizers[0].color"`},
		{[]string{"--authorization-config=" + write("twice.yaml", "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- {type: RBAC, name: rbac}\n- {type: RBAC, name: rbac2}\n")}, `authorizers[1].type: Duplicate value: "RBAC"`},
		{[]string{"--authorization-config=" + write("name.yaml", "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- {type: Node, name: kubelets}\n")}, "expected name node for authorizer Node instead of kubelets"},
		{[]string{"--authorization-config=" + write("hook.yaml", `apiVersion: apiserver.config.k8s.io/v1beta1
kind: AuthorizationConfiguration
authorizers:
- type: Webhook
  name: hook
  webhook:
    timeout: 40s
    subjectAccessReviewVersion: v2
    failurePolicy: Maybe
    connectionInfo: {type: KubeConfigFile, kubeConfigFile: relative.kubeconfig}
    matchConditions: [{expression: "request.nope"}]
`)}, `authorizers[0].timeout: Invalid value: "40s": must be > 0s and <= 30s`},
	} {
		err := startError(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v:\ngot  %v\nwant %q", tc.args, err, tc.want)
		}
	}
}

// startError runs capstan with args and returns why it did not start; a
// start that succeeds is stopped at once and returns nil.
func startError(t *testing.T, args ...string) error {
	t.Helper()
	o := app.NewOptions()
	fs := pflag.NewFlagSet("capstan", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(append([]string{"--secure-port=0", "--data-dir=" + t.TempDir(), "--unsafe-no-fsync"}, args...)); err != nil {
		return err
	}
	c, cancel := context.WithCancel(ctx(t))
	defer cancel()
	return app.Run(c, o, io.Discard, func(*app.Process) { cancel() })
}
