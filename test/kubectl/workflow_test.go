package kubectl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capstan-io/capstan/internal/testkit"
)

const settings = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  labels: {app: shop}
data:
  mode: "%s"
`

func TestServerSideApply(t *testing.T) {
	testkit.Kubectl(t)
	s := testkit.StartServer(t)
	mustContain(t, run(t, s, strings.Replace(settings, "%s", "a", 1), "apply", "--validate=false", "--server-side", "-f", "-"),
		"configmap/settings serverside-applied")
	out := run(t, s, "", "get", "cm", "settings", "-o", "yaml", "--show-managed-fields")
	mustContain(t, out, "manager: kubectl", "operation: Apply", "f:mode: {}")

	// another manager that sets the same field conflicts, unless it forces
	errOut := fail(t, s, "apply", "--validate=false", "--server-side", "--field-manager=other", "-f",
		writeFile(t, strings.Replace(settings, "%s", "b", 1)))
	mustContain(t, errOut, `Apply failed with 1 conflict: conflict with "kubectl": .data.mode`)
	run(t, s, "", "apply", "--validate=false", "--server-side", "--field-manager=other", "--force-conflicts", "-f",
		writeFile(t, strings.Replace(settings, "%s", "b", 1)))
	mustContain(t, run(t, s, "", "get", "cm", "settings", "-o", "jsonpath={.data.mode}"), "b")
}

func TestDryRunDiffReplaceAndWait(t *testing.T) {
	testkit.Kubectl(t)
	s := testkit.StartServer(t)
	// create --dry-run=server stores nothing
	mustContain(t, run(t, s, "", "create", "configmap", "ghost", "--from-literal=a=b", "--dry-run=server"), "configmap/ghost created (server dry run)")
	mustContain(t, fail(t, s, "get", "cm", "ghost"), `configmaps "ghost" not found`)

	run(t, s, strings.Replace(settings, "%s", "a", 1), "apply", "--validate=false", "-f", "-")
	// kubectl diff asks the server for a dry-run of the change
	out, _, err := testkit.RunKubectl(t, s.Kubeconfig, strings.NewReader(strings.Replace(settings, "%s", "z", 1)), "diff", "-f", "-")
	if err == nil || !strings.Contains(out, "-  mode: a") || !strings.Contains(out, "+  mode: z") {
		t.Fatalf("kubectl diff: err=%v, want exit 1 and a diff of mode; got:\n%s", err, out)
	}
	mustContain(t, run(t, s, "", "get", "cm", "settings", "-o", "jsonpath={.data.mode}"), "a")

	run(t, s, strings.Replace(settings, "%s", "r", 1), "replace", "-f", "-")
	mustContain(t, run(t, s, "", "wait", "--for=jsonpath={.data.mode}=r", "cm/settings", "--timeout=20s"), "condition met")
	mustContain(t, run(t, s, "", "get", "cm", "-o", "custom-columns=NAME:.metadata.name,MODE:.data.mode"), "settings", "r")

	// A finalizer holds the object while kubectl starts waiting for its end.
	run(t, s, "", "patch", "cm", "settings", "-p", `{"metadata":{"finalizers":["example.com/hold"]}}`)
	run(t, s, "", "delete", "cm", "settings", "--wait=false")
	w := testkit.StartKubectl(t, s.Kubeconfig, "wait", "--for=delete", "cm/settings", "--timeout=30s", "-v=6")
	w.WaitFor(t, "Caches populated")
	run(t, s, "", "patch", "cm", "settings", "--type=json", "-p", `[{"op":"remove","path":"/metadata/finalizers"}]`)
	w.WaitFor(t, "condition met")
}

func TestEditWithAnEditorScript(t *testing.T) {
	testkit.Kubectl(t)
	s := testkit.StartServer(t)
	run(t, s, "", "create", "configmap", "edited", "--from-literal=color=blue")
	editor := filepath.Join(t.TempDir(), "editor.sh")
	script := "#!/bin/sh\nsed -i 's/color: blue/color: green/' \"$1\"\n"
	if err := os.WriteFile(editor, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBE_EDITOR", editor)
	mustContain(t, run(t, s, "", "edit", "cm", "edited"), "configmap/edited edited")
	mustContain(t, run(t, s, "", "get", "cm", "edited", "-o", "jsonpath={.data.color}"), "green")
}

func TestApplyPrune(t *testing.T) {
	testkit.Kubectl(t)
	s := testkit.StartServer(t)
	two := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one, labels: {set: p}}\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: two, labels: {set: p}}\n"
	run(t, s, two, "apply", "--validate=false", "-f", "-")
	one := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one, labels: {set: p}}\n"
	out := run(t, s, one, "apply", "--validate=false", "--prune", "-l", "set=p", "--prune-allowlist=core/v1/ConfigMap", "-f", "-")
	mustContain(t, out, "configmap/two pruned")
	mustContain(t, fail(t, s, "get", "cm", "two"), `configmaps "two" not found`)
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
