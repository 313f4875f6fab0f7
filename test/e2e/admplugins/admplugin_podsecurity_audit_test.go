package admplugins

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

const podSecurityAdmissionConfig = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults: {enforce: privileged, audit: privileged, warn: privileged}
    exemptions: {namespaces: [exempt], usernames: [], runtimeClasses: [free]}
`

// TestPodSecurityAuditAnnotations: each pod create's audit event carries
// kube's pod-security.kubernetes.io/* annotations: the policy enforced,
// the audit level's violations (on a refused create too), the reason of an
// exemption, a namespace's unparsable labels.
func TestPodSecurityAuditAnnotations(t *testing.T) {
	dir := t.TempDir()
	policy, cfg, logPath := filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "admission.yaml"), filepath.Join(dir, "audit.log")
	for path, data := range map[string]string{policy: "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  resources: [{group: \"\", resources: [pods]}]\n",
		cfg: podSecurityAdmissionConfig} {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e := e2eutil.Start(t, "--audit-policy-file="+policy, "--audit-log-path="+logPath, "--admission-control-config-file="+cfg)
	nsWith := func(name string, labels map[string]string) string {
		if _, err := e.Clientset.CoreV1().Namespaces().Create(e2eutil.Ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		return name
	}
	audited := nsWith(e2eutil.Unique("audited"), map[string]string{"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/audit": "restricted"})
	nsWith("exempt", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	plain := nsWith(e2eutil.Unique("plain"), nil)
	pod := func(ns, name string, mutate func(*corev1.Pod)) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
		if mutate != nil {
			mutate(p)
		}
		_, _ = e.Clientset.CoreV1().Pods(ns).Create(e2eutil.Ctx(t), p, metav1.CreateOptions{})
	}
	pod(audited, "ok", nil)
	pod(audited, "host", func(p *corev1.Pod) { p.Spec.HostNetwork = true })
	pod("exempt", "ex", nil)
	pod(plain, "free", nil)
	const prefix = "pod-security.kubernetes.io/"
	violation := `would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false`
	want := map[string]map[string]string{
		audited + "/ok":   {prefix + "enforce-policy": "baseline:latest", prefix + "audit-violations": violation},
		audited + "/host": {prefix + "enforce-policy": "baseline:latest", prefix + "audit-violations": `would violate PodSecurity "restricted:latest": host namespaces (hostNetwork=true)`},
		"exempt/ex":       {prefix + "exempt": "namespace"},
		plain + "/free":   {prefix + "enforce-policy": "privileged:latest"},
	}
	var got map[string]map[string]string
	e2eutil.Eventually(t, 30*time.Second, "audit events of the pod creates", func(context.Context) (bool, error) {
		got = podCreateAnnotations(t, logPath, prefix)
		return len(got) == len(want), nil
	})
	for key, w := range want {
		for k, v := range w {
			if g := got[key][k]; !strings.HasPrefix(g, v) {
				t.Errorf("%s: annotation %s = %q, want it to begin %q", key, k, g, v)
			}
		}
		if len(got[key]) != len(w) {
			t.Errorf("%s: annotations %v, want the keys of %v", key, got[key], w)
		}
	}
}

// podCreateAnnotations reads the audit log's pod creates (their
// ResponseComplete events) and their annotations that begin with prefix.
func podCreateAnnotations(t *testing.T, path, prefix string) map[string]map[string]string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	out := map[string]map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev auditv1.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if ev.Verb != "create" || ev.Stage != auditv1.StageResponseComplete || ev.ObjectRef == nil || ev.ObjectRef.Resource != "pods" {
			continue
		}
		m := map[string]string{}
		for k, v := range ev.Annotations {
			if strings.HasPrefix(k, prefix) {
				m[k] = v
			}
		}
		out[ev.ObjectRef.Namespace+"/"+ev.ObjectRef.Name] = m
	}
	return out
}
