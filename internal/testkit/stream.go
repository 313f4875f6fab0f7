package testkit

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// KubectlStream is a kubectl that keeps running (get -w), whose output a
// test reads as it comes.
type KubectlStream struct {
	mu  sync.Mutex // guards out
	out bytes.Buffer
}

// StartKubectl starts kubectl in the background; it is killed when the
// test ends.
func StartKubectl(t testing.TB, kubeconfig string, args ...string) *KubectlStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, Kubectl(t), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "KUBERC=off", "KUBECACHEDIR="+t.TempDir())
	s := &KubectlStream{}
	cmd.Stdout = writerFunc(s.write)
	cmd.Stderr = writerFunc(s.write)
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting kubectl: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	return s
}

func (s *KubectlStream) write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.Write(p)
}

// Output is everything kubectl has printed so far.
func (s *KubectlStream) Output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// WaitFor waits until one line of the output contains every one of wants.
func (s *KubectlStream) WaitFor(t testing.TB, wants ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, line := range strings.Split(s.Output(), "\n") {
			if containsAll(line, wants) {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("kubectl never printed a line with %q; output:\n%s", wants, s.Output())
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
