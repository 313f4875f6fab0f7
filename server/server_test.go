package server_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/capstan-io/capstan/apis/scheme"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/pki"
	"github.com/capstan-io/capstan/server"
)

// startServer runs a one-server chain with the given hooks until the test
// ends, and returns it with a cancel func that begins shutdown.
func startServer(t *testing.T, delay time.Duration, hooks map[string]server.HookFunc, edits ...func(*server.Config)) (*server.Server, context.CancelFunc, <-chan error) {
	t.Helper()
	certs, err := pki.EnsureServing(pki.ServingOptions{DataDir: t.TempDir(), CertDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := server.Config{
		Serving:        server.ServingConfig{Listener: l, GetCertificate: certs.GetCertificate, ExternalAddress: l.Addr().String()},
		Codecs:         server.CodecConfig{Serializer: scheme.Codecs, ParameterCodec: scheme.ParameterCodec, Creater: scheme.Scheme, Typer: scheme.Scheme},
		Authentication: authn.NewAnonymous(),
		Loopback:       server.NewLoopback(),
		Shutdown:       server.ShutdownConfig{Delay: delay},
	}
	for _, edit := range edits {
		edit(&c)
	}
	cfg, err := c.Complete()
	if err != nil {
		t.Fatal(err)
	}
	s, err := cfg.New("test", server.NewEmptyDelegate(server.WriteNotFound(cfg)))
	if err != nil {
		t.Fatal(err)
	}
	for name, fn := range hooks {
		s.AddPostStartHook(name, fn)
	}
	ctx, cancel := context.WithCancel(context.Background())
	result := make(chan error, 1)
	done := make(chan error, 1)
	prepared := s.PrepareRun()
	go func() {
		err := prepared.Run(ctx)
		result <- err
		done <- err
	}()
	t.Cleanup(func() { cancel(); <-result })
	return s, cancel, done
}

// getUntil gets path until done says the answer is the awaited one, for
// up to 30 seconds, and returns that answer.
func getUntil(t *testing.T, s *server.Server, path string, done func(code int, body string) bool) (int, string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := get(t, s, path)
		if done(code, body) {
			return code, body
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s after 30s: %d\n%s", path, code, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// get requests path through the in-process loopback client.
func get(t *testing.T, s *server.Server, path string) (int, string) {
	t.Helper()
	client, err := rest.HTTPClientFor(s.LoopbackClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	var resp *http.Response
	for i := 0; i < 100; i++ { // the loopback serves once Run has started
		req, _ := http.NewRequest(http.MethodGet, s.LoopbackClientConfig().Host+path, nil)
		req.Header.Set("Authorization", "Bearer "+s.LoopbackClientConfig().BearerToken)
		if resp, err = client.Do(req); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}

func TestFailingHookKeepsReadyzFailing(t *testing.T) {
	s, _, _ := startServer(t, 0, map[string]server.HookFunc{
		"broken": func(server.HookContext) error { return errors.New("boom") },
		"fine":   func(server.HookContext) error { return nil },
	})
	// Both hooks ran: one said why it failed, the other passes.
	getUntil(t, s, "/readyz/poststarthook/broken", func(_ int, body string) bool { return strings.Contains(body, "boom") })
	getUntil(t, s, "/readyz/poststarthook/fine", func(code int, _ string) bool { return code == http.StatusOK })
	code, body := get(t, s, "/readyz?verbose")
	if code != http.StatusInternalServerError || !strings.Contains(body, "[-]poststarthook/broken failed: reason withheld") ||
		!strings.Contains(body, "[+]poststarthook/fine ok") || !strings.Contains(body, "readyz check failed") {
		t.Fatalf("/readyz?verbose = %d\n%s", code, body)
	}
	code, body = get(t, s, "/readyz/poststarthook/broken")
	if code != http.StatusInternalServerError || !strings.Contains(body, "boom") {
		t.Fatalf("/readyz/poststarthook/broken = %d %q, want 500 saying why", code, body)
	}
	code, body = get(t, s, "/readyz?exclude=poststarthook/broken")
	if code != http.StatusOK || body != "ok" {
		t.Fatalf("/readyz?exclude = %d %q, want 200 ok", code, body)
	}
	if code, _ := get(t, s, "/livez"); code != http.StatusInternalServerError {
		t.Fatalf("/livez = %d, want 500 while a hook has failed", code)
	}
}

func TestShutdownDelayFailsReadyzFirst(t *testing.T) {
	s, cancel, done := startServer(t, 400*time.Millisecond, nil)
	// The server serves until its pre-shutdown hooks end: this one holds
	// it there until the checks are made, however slow the machine.
	checked := make(chan struct{})
	s.AddPreShutdownHook("held", func(server.HookContext) error { <-checked; return nil })
	if code, body := get(t, s, "/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz before shutdown = %d %q", code, body)
	}
	cancel()
	code, body := getUntil(t, s, "/readyz?verbose", func(code int, _ string) bool { return code != http.StatusOK })
	if code != http.StatusInternalServerError || !strings.Contains(body, "[-]shutdown failed") {
		close(checked)
		t.Fatalf("/readyz during shutdown delay = %d\n%s", code, body)
	}
	if code, _ := get(t, s, "/healthz"); code != http.StatusOK {
		close(checked)
		t.Fatalf("/healthz during shutdown delay = %d, want 200: requests are still served", code)
	}
	close(checked)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run returned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("server did not stop")
	}
}

// --debug-socket-path serves pprof on a unix socket, and only there.
func TestDebugSocketServesPprof(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "debug.sock")
	s, _, _ := startServer(t, 0, nil, func(c *server.Config) { c.Debug.SocketPath = sock })
	if code, _ := get(t, s, "/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz = %d", code)
	}
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	resp, err := client.Get("http://debug/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "goroutine profile:") {
		t.Fatalf("pprof over the debug socket = %d %.200s", resp.StatusCode, body)
	}
	if code, _ := get(t, s, "/debug/pprof/"); code == http.StatusOK {
		t.Fatal("pprof is served on the API port too")
	}
}

// TestLivezGracePeriod: within --livez-grace-period a post-start hook that
// has not finished does not fail /livez (it still fails /readyz); without
// a grace period it does.
func TestLivezGracePeriod(t *testing.T) {
	for _, tc := range []struct {
		grace     time.Duration
		wantLivez int
	}{
		{time.Hour, http.StatusOK},
		{0, http.StatusInternalServerError},
	} {
		release := make(chan struct{})
		s, _, _ := startServer(t, 0, map[string]server.HookFunc{
			"slow": func(hc server.HookContext) error {
				select {
				case <-release:
				case <-hc.Done():
				}
				return nil
			},
		}, func(c *server.Config) { c.Health.LivezGracePeriod = tc.grace })
		if code, body := get(t, s, "/readyz?verbose"); code != http.StatusInternalServerError || !strings.Contains(body, "[-]poststarthook/slow failed") {
			t.Errorf("grace %v: /readyz = %d\n%s", tc.grace, code, body)
		}
		if code, body := get(t, s, "/livez?verbose"); code != tc.wantLivez {
			t.Errorf("grace %v: /livez = %d, want %d\n%s", tc.grace, code, tc.wantLivez, body)
		}
		close(release)
	}
}
