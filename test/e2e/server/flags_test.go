package server

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/app"
	"github.com/capstan-io/capstan/internal/testkit"
)

// TestFlagsRefused: kube-apiserver's flags with values that are malformed,
// or that ask for what capstan does not do, stop the start with a message
// that names the flag, before anything is served.
func TestFlagsRefused(t *testing.T) {
	t.Parallel()
	tracing := filepath.Join(t.TempDir(), "tracing.yaml")
	if err := os.WriteFile(tracing, []byte("apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nsamplingRatePerMillion: 2000000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--no-such-flag"}, "unknown flag: --no-such-flag"},
		{[]string{"--runtime-config=foo"}, "runtime-config invalid key foo"},
		{[]string{"--runtime-config=api/all=false"}, "invalid runtime-config with only api/all=false"},
		{[]string{"--runtime-config=apps/v1beta1=true"}, "unknown api groups apps/v1beta1"},
		{[]string{"--runtime-config=api/alpha=true"}, "capstan serves no alpha API versions"},
		{[]string{"--runtime-config=api/beta=yes"}, "invalid value api/beta=yes"},
		{[]string{"--runtime-config=apps/v1/Deployments=false"}, "resource is always lowercase plural"},
		{[]string{"--feature-gates=Nope=true"}, "unrecognized feature gate: Nope"},
		{[]string{"--feature-gates=AllAlpha=maybe"}, `invalid value of AllAlpha=maybe`},
		{[]string{"--etcd-servers-overrides=events#http://127.0.0.1:1"}, "--etcd-servers-overrides invalid, must be of format: group/resource#servers"},
		{[]string{"--goaway-chance=0.5"}, "--goaway-chance can not be less than 0 or greater than 0.02"},
		{[]string{"--storage-backend=etcd2"}, "--storage-backend invalid, allowed values: etcd3"},
		{[]string{"--storage-media-type=text/plain"}, `--storage-media-type "text/plain" invalid`},
		{[]string{"--cors-allowed-origins=example.com"}, "does not pin to start/end of host"},
		{[]string{"--strict-transport-security-directives=max-age"}, "--strict-transport-security-directives invalid"},
		{[]string{"--emulated-version=1.36"}, "cannot emulate another version"},
		{[]string{"--logging-format=xml"}, "Unsupported log format"},
		{[]string{"--tracing-config-file=" + tracing}, "failed to validate tracing configuration: samplingRatePerMillion: Invalid value: 2000000: sampling rate per million must be less than or equal to one million"},
		{[]string{"--proxy-client-cert-file=/nonexistent/cert", "--proxy-client-key-file=/nonexistent/key"}, "--proxy-client-cert-file: open /nonexistent/cert"},
		{[]string{"--etcd-servers=https://127.0.0.1:1", "--etcd-cafile=/nonexistent/ca"}, "etcd TLS"},
		{[]string{"--endpoint-reconciler-type=bogus"}, `--endpoint-reconciler-type "bogus" is not one of`},
		{[]string{"--livez-grace-period=-1s"}, "--livez-grace-period can not be a negative value"},
	} {
		t.Run(strings.Join(tc.flags, " "), func(t *testing.T) {
			err := testkit.StartError(t, tc.flags...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("capstan %s: got %v, want an error containing %q", strings.Join(tc.flags, " "), err, tc.want)
			}
		})
	}
}

// TestRuntimeConfigTurnsOff: --runtime-config=group/version=false and
// group/version/resource=false take them out of discovery and routing.
func TestRuntimeConfigTurnsOff(t *testing.T) {
	t.Parallel()
	e := e2eutil.Start(t, "--runtime-config=batch/v1=false,apps/v1/daemonsets=false")
	groups, err := e.Clientset.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups.Groups {
		if g.Name == "batch" {
			t.Errorf("batch is in discovery: %+v", g)
		}
	}
	apps, err := e.Clientset.Discovery().ServerResourcesForGroupVersion("apps/v1")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range apps.APIResources {
		names = append(names, r.Name)
	}
	if strings.Contains(strings.Join(names, ","), "daemonsets") || !strings.Contains(strings.Join(names, ","), "deployments") {
		t.Errorf("apps/v1 resources: %v, want deployments and no daemonsets", names)
	}
	_, err = e.Clientset.BatchV1().Jobs("default").List(e2eutil.Ctx(t), metav1.ListOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("listing jobs: %v, want NotFound", err)
	}
	_, err = e.Clientset.AppsV1().DaemonSets("default").List(e2eutil.Ctx(t), metav1.ListOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("listing daemon sets: %v, want NotFound", err)
	}
}

// TestResponseHeaderFlags: --cors-allowed-origins answers preflights and
// marks allowed origins' responses, --strict-transport-security-directives
// adds HSTS, and --profiling (on by default) serves pprof to the admin.
func TestResponseHeaderFlags(t *testing.T) {
	t.Parallel()
	e := e2eutil.Start(t, `--cors-allowed-origins=//app\.example\.com$`, "--strict-transport-security-directives=max-age=31536000,includeSubDomains")
	r := e.Do(t, http.MethodOptions, "/api/v1/namespaces", nil, "Origin", "https://app.example.com")
	if r.Code != http.StatusNoContent || r.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		r.Header.Get("Access-Control-Allow-Credentials") != "true" {
		t.Errorf("preflight from an allowed origin: %d %v", r.Code, r.Header)
	}
	r = e.Do(t, http.MethodGet, "/api/v1/namespaces", nil, "Origin", "https://evil.example.com")
	if r.Code != http.StatusOK || r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("GET from another origin: %d, Access-Control-Allow-Origin %q", r.Code, r.Header.Get("Access-Control-Allow-Origin"))
	}
	if got := r.Header.Get("Strict-Transport-Security"); got != "max-age=31536000; includeSubDomains" {
		t.Errorf("Strict-Transport-Security %q", got)
	}
	if r := e.Do(t, http.MethodGet, "/debug/pprof/cmdline", nil); r.Code != http.StatusOK {
		t.Errorf("pprof with --profiling: %d %s", r.Code, r.Body)
	}
	off := e2eutil.Start(t, "--profiling=false")
	if r := off.Do(t, http.MethodGet, "/debug/pprof/cmdline", nil); r.Code != http.StatusNotFound {
		t.Errorf("pprof with --profiling=false: %d, want 404", r.Code)
	}
}

// TestVersionFlag: --version prints kube's line and quits; --version=raw
// prints the whole version.
func TestVersionFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ arg, want string }{
		{"--version", "Kubernetes v1.37.2\n"},
		{"--version=raw", `"gitVersion": "v1.37.2"`},
	} {
		var out bytes.Buffer
		cmd := app.NewCommand(&out)
		cmd.SetArgs([]string{tc.arg})
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%s: %v", tc.arg, err)
		}
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("%s printed %q, want %q", tc.arg, out.String(), tc.want)
		}
	}
}

// TestJSONLogs: --logging-format=json writes one JSON object per line.
func TestJSONLogs(t *testing.T) {
	t.Parallel()
	var out e2eutil.SyncBuffer
	cmd := app.NewCommand(&out)
	cmd.SetArgs([]string{"--logging-format=json", "--data-dir=" + t.TempDir(), "--secure-port=0", "--bind-address=127.0.0.1", "--unsafe-no-fsync"})
	c, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(c) }()
	e2eutil.Eventually(t, time.Minute, "capstan to log its start", func(context.Context) (bool, error) {
		return strings.Contains(out.String(), "capstan is serving at"), nil
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, line := range strings.Split(out.String(), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		lines++
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil || m["msg"] == nil {
			t.Errorf("not a JSON log line: %q (%v)", line, err)
		}
	}
	if lines == 0 {
		t.Errorf("no JSON log line in %q", out.String())
	}
}
