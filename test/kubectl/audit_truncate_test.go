package kubectl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/capstan-io/capstan/internal/testkit"
)

// TestAuditTruncate: with --audit-log-truncate-enabled, an event larger
// than --audit-log-truncate-max-event-size is written without its request
// and response objects, annotated audit.k8s.io/truncated: "true", as
// kube-apiserver v1.37.2 writes it; smaller events keep theirs.
func TestAuditTruncate(t *testing.T) {
	testkit.Kubectl(t)
	dir := t.TempDir()
	policy, logPath := filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "audit.log")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	s := testkit.StartServer(t, "--audit-policy-file="+policy, "--audit-log-path="+logPath,
		"--audit-log-truncate-enabled", "--audit-log-truncate-max-event-size=3000", "--audit-log-truncate-max-batch-size=100000")
	mustContain(t, run(t, s, "", "create", "configmap", "big", "--from-literal=a="+strings.Repeat("x", 5000)), "configmap/big created")
	mustContain(t, run(t, s, "", "create", "configmap", "small", "--from-literal=a=b"), "configmap/small created")
	s.Stop(t)

	done := map[string]*auditv1.Event{}
	for _, ev := range eventsOf(readAuditLog(t, logPath), "create", "configmaps") {
		if ev.Stage == auditv1.StageResponseComplete {
			done[ev.ObjectRef.Name] = ev
		}
	}
	big, small := done["big"], done["small"]
	if big == nil || small == nil {
		t.Fatalf("the creates' ResponseComplete events: %v", done)
	}
	if big.Annotations["audit.k8s.io/truncated"] != "true" || big.RequestObject != nil || big.ResponseObject != nil {
		t.Errorf("big: annotations %v, objects %v %v; want truncated", big.Annotations, big.RequestObject != nil, big.ResponseObject != nil)
	}
	if _, ok := small.Annotations["audit.k8s.io/truncated"]; ok || small.RequestObject == nil || small.ResponseObject == nil {
		t.Errorf("small: annotations %v, objects %v %v; want untouched", small.Annotations, small.RequestObject != nil, small.ResponseObject != nil)
	}
}

// TestAuditTruncateFlagErrors: kube's checks of the truncate sizes.
func TestAuditTruncateFlagErrors(t *testing.T) {
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(t.TempDir(), "audit.log")
	for _, tc := range []struct{ flag, want string }{
		{"--audit-log-truncate-max-event-size=0", "invalid audit truncate log max event size 0, must be a positive number"},
		{"--audit-log-truncate-max-batch-size=10", "invalid audit truncate log max batch size 10, must be greater than max event size (102400)"},
	} {
		err := testkit.StartError(t, "--audit-policy-file="+policy, "--audit-log-path="+logPath, tc.flag)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %s", tc.flag, err, tc.want)
		}
	}
}
