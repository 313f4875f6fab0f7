package metrics

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"strings"
	"testing"
	"time"

	"github.com/capstan-io/capstan/app"
)

// runLogged starts capstan with args until it serves, and returns what
// it logged.
func runLogged(t *testing.T, args ...string) string {
	t.Helper()
	var out e2eutil.SyncBuffer
	cmd := app.NewCommand(&out)
	cmd.SetArgs(append([]string{"--data-dir=" + t.TempDir(), "--secure-port=0", "--bind-address=127.0.0.1", "--unsafe-no-fsync"}, args...))
	c, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(c) }()
	e2eutil.Eventually(t, time.Minute, "capstan to log its start", func(context.Context) (bool, error) {
		return strings.Contains(out.String(), "capstan is serving at"), nil
	})
	e2eutil.Eventually(t, time.Minute, "capstan's own requests", func(context.Context) (bool, error) {
		logsRequests := strings.Contains(strings.Join(args, " "), "--v=3") || strings.Contains(strings.Join(args, " "), "httplog=3")
		return strings.Contains(out.String(), "msg=HTTP") || !logsRequests, nil
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestRequestLogs: at -v=3 every request is logged as kube's httplog
// logs it; at the default level neither requests nor each watch cache's
// start are.
func TestRequestLogs(t *testing.T) {
	t.Parallel()
	quiet := runLogged(t)
	for _, noisy := range []string{"msg=HTTP", "watch cache ready"} {
		if strings.Contains(quiet, noisy) {
			t.Errorf("the default level logs %q:\n%s", noisy, quiet)
		}
	}
	loud := runLogged(t, "--v=3")
	for _, line := range strings.Split(loud, "\n") {
		if !strings.Contains(line, "msg=HTTP") {
			continue
		}
		for _, field := range []string{"verb=", "URI=", "latency=", "userAgent=", "audit-ID=", "srcIP=", "resp="} {
			if !strings.Contains(line, field) {
				t.Errorf("request log line lacks %s: %s", field, line)
			}
		}
		return
	}
	t.Errorf("no request logged at -v=3:\n%s", loud)
}

// TestVModule: --vmodule sets the verbosity of the files it names, as
// klog's: httplog=3 logs requests, reflector=1 each watch cache's start,
// and no other file logs below Info.
func TestVModule(t *testing.T) {
	t.Parallel()
	out := runLogged(t, "--vmodule=httplog=3,reflector=1")
	for _, want := range []string{"msg=HTTP", "watch cache ready"} {
		if !strings.Contains(out, want) {
			t.Errorf("--vmodule=httplog=3,reflector=1 does not log %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "level=DEBUG") && !strings.Contains(line, "watch cache ready") {
			t.Errorf("a file --vmodule does not name logs below Info: %s", line)
		}
	}
}
