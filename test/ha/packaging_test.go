package ha

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/capstan-io/capstan/app"
)

// TestSystemdUnit: the ExecStart line of deploy/systemd/capstan.service
// parses with capstan's flags, and capstan starts with it (the data dir
// and address moved into the test's, as a later flag overrides).
func TestSystemdUnit(t *testing.T) {
	unit, err := os.ReadFile("../../deploy/systemd/capstan.service")
	if err != nil {
		t.Fatal(err)
	}
	args := execStart(t, string(unit))
	if args[0] != "/usr/local/bin/capstan" {
		t.Errorf("ExecStart runs %s", args[0])
	}
	checkFlags(t, args[1:])
	r := &replica{name: "systemd", dir: t.TempDir()}
	port := freePort(t)
	r.run(t, append(args[1:], "--data-dir="+r.dir, "--bind-address=127.0.0.1", fmt.Sprint("--secure-port=", port)))
	var cfgErr error
	deadline := time.Now().Add(time.Minute)
	for {
		// The admin kubeconfig is written once the port is bound.
		cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(r.dir, "admin.kubeconfig"))
		if err == nil {
			r.waitReady(t, kubernetes.NewForConfigOrDie(cfg))
			break
		}
		if cfgErr = err; time.Now().After(deadline) {
			t.Fatalf("no admin kubeconfig: %v\n%s", cfgErr, r.logTail())
		}
		select {
		case <-r.done:
			t.Fatalf("capstan exited:\n%s", r.logTail())
		case <-time.After(50 * time.Millisecond):
		}
	}
	r.stop(t)
}

// TestDockerfile checks what can be checked of deploy/Dockerfile without
// docker (which CI has not): the image is distroless or scratch, runs as a
// non-root user, builds a static binary, and its default arguments parse
// with capstan's flags.
func TestDockerfile(t *testing.T) {
	data, err := os.ReadFile("../../deploy/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var final []string // the lines of the last stage
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "FROM ") {
			final = nil
		}
		final = append(final, line)
	}
	base := strings.Fields(final[0])[1]
	if !strings.HasPrefix(base, "gcr.io/distroless/static") && base != "scratch" {
		t.Errorf("final stage is FROM %s, not distroless static or scratch", base)
	}
	var user, cmd string
	for _, line := range final {
		if v, ok := strings.CutPrefix(line, "USER "); ok {
			user = v
		}
		if v, ok := strings.CutPrefix(line, "CMD "); ok {
			cmd = v
		}
	}
	if user == "" || strings.HasPrefix(user, "0") || strings.HasPrefix(user, "root") {
		t.Errorf("USER %q: the image must run as a non-root user", user)
	}
	if !strings.Contains(string(data), "CGO_ENABLED=0 go build") {
		t.Error("the binary is not built static (CGO_ENABLED=0)")
	}
	var args []string
	if err := json.Unmarshal([]byte(cmd), &args); err != nil {
		t.Fatalf("CMD %s: %v", cmd, err)
	}
	checkFlags(t, args)
}

// execStart is the ExecStart command of a unit, continuation lines joined.
func execStart(t *testing.T, unit string) []string {
	joined := strings.ReplaceAll(unit, "\\\n", " ")
	for _, line := range strings.Split(joined, "\n") {
		if v, ok := strings.CutPrefix(line, "ExecStart="); ok {
			return strings.Fields(v)
		}
	}
	t.Fatal("no ExecStart line")
	return nil
}

// checkFlags parses args as capstan does and validates them.
func checkFlags(t *testing.T, args []string) {
	t.Helper()
	o := app.NewOptions()
	fs := pflag.NewFlagSet("capstan", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	o.Complete()
	if err := o.Validate(); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
}
