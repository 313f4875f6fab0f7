// Package kubectl drives the real kubectl, built from k8s.io/kubectl at
// the pinned version, against capstan: the daily path of a user.
package kubectl

import (
	"strings"
	"testing"

	"github.com/capstan-io/capstan/internal/testkit"
)

// run runs kubectl and fails the test if it fails.
func run(t *testing.T, s *testkit.Server, stdin string, args ...string) string {
	t.Helper()
	out, errOut, err := testkit.RunKubectl(t, s.Kubeconfig, strings.NewReader(stdin), args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// fail runs kubectl, expects it to fail, and returns its stderr.
func fail(t *testing.T, s *testkit.Server, args ...string) string {
	t.Helper()
	out, errOut, err := testkit.RunKubectl(t, s.Kubeconfig, nil, args...)
	if err == nil {
		t.Fatalf("kubectl %s succeeded, want failure; stdout: %s", strings.Join(args, " "), out)
	}
	return errOut
}

func mustContain(t *testing.T, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Fatalf("output does not contain %q:\n%s", w, got)
		}
	}
}

const configMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: applied
  labels: {app: demo}
data:
  a: "%s"
`

func TestDailyPath(t *testing.T) {
	testkit.Kubectl(t) // build before the server starts its clock
	s := testkit.StartServer(t)

	mustContain(t, run(t, s, "", "get", "namespaces"), "default", "kube-system", "kube-public", "kube-node-lease")
	mustContain(t, run(t, s, "", "create", "configmap", "plain", "--from-literal=k=v"), "configmap/plain created")
	mustContain(t, run(t, s, "", "get", "configmap", "plain", "-o", "jsonpath={.data.k}"), "v")

	// client-side apply: create, then a three-way merge
	mustContain(t, run(t, s, strings.Replace(configMap, "%s", "1", 1), "apply", "--validate=false", "-f", "-"), "configmap/applied created")
	mustContain(t, run(t, s, strings.Replace(configMap, "%s", "2", 1), "apply", "--validate=false", "-f", "-"), "configmap/applied configured")
	mustContain(t, run(t, s, "", "get", "cm", "applied", "-o", "jsonpath={.data.a}"), "2")

	run(t, s, "", "patch", "cm", "applied", "-p", `{"data":{"b":"x"}}`)
	run(t, s, "", "patch", "cm", "applied", "--type=merge", "-p", `{"data":{"c":"y"}}`)
	run(t, s, "", "patch", "cm", "applied", "--type=json", "-p", `[{"op":"add","path":"/data/d","value":"z"}]`)
	mustContain(t, run(t, s, "", "get", "cm", "applied", "-o", "jsonpath={.data}"), `"b":"x"`, `"c":"y"`, `"d":"z"`)

	run(t, s, "", "label", "cm", "applied", "tier=web")
	mustContain(t, run(t, s, "", "get", "cm", "-l", "tier=web", "-o", "name"), "configmap/applied")

	mustContain(t, run(t, s, "", "delete", "cm", "applied"), `configmap "applied" deleted`)
	mustContain(t, fail(t, s, "get", "cm", "applied"), `configmaps "applied" not found`)
}

func TestResourcesOfTheFoundation(t *testing.T) {
	testkit.Kubectl(t)
	s := testkit.StartServer(t)
	out := run(t, s, "", "api-resources")
	mustContain(t, out, "configmaps", "namespaces", "secrets", "serviceaccounts", "events", "leases", "coordination.k8s.io/v1", "events.k8s.io/v1")

	run(t, s, "", "create", "namespace", "team")
	run(t, s, "", "-n", "team", "create", "secret", "generic", "s1", "--from-literal=p=q")
	run(t, s, "", "-n", "team", "create", "serviceaccount", "bot")
	mustContain(t, run(t, s, "", "-n", "team", "get", "secret", "s1", "-o", "jsonpath={.type}"), "Opaque")
	mustContain(t, run(t, s, "", "-n", "team", "get", "sa", "-o", "name"), "serviceaccount/bot")
	mustContain(t, fail(t, s, "-n", "missing", "create", "configmap", "x"), `namespaces "missing" not found`)
	mustContain(t, run(t, s, "", "delete", "namespace", "team", "--wait=true", "--timeout=60s"), `namespace "team" deleted`)
	mustContain(t, fail(t, s, "get", "namespace", "team"), `namespaces "team" not found`)
}

func TestGetWatchPrintsChanges(t *testing.T) {
	testkit.Kubectl(t)
	s := testkit.StartServer(t)
	run(t, s, "", "create", "configmap", "first")
	w := testkit.StartKubectl(t, s.Kubeconfig, "get", "configmaps", "-w", "--output-watch-events")
	w.WaitFor(t, "first")
	run(t, s, "", "create", "configmap", "second")
	w.WaitFor(t, "ADDED", "second")
	run(t, s, "", "delete", "configmap", "second")
	w.WaitFor(t, "DELETED")
}
