package kubelet

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gwebsocket "github.com/gorilla/websocket"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/capstan-io/capstan/internal/kubelettest"
	"github.com/capstan-io/capstan/internal/testkit"
)

// TestKubeletExec: kubectl exec (WebSocket v5, translated to SPDY toward
// the kubelet) runs a command with its output, stdin and exit code.
func TestKubeletExec(t *testing.T) {
	ke := startKubelet(t)
	out, stderr, err := ke.kubectl(t, nil, "exec", "web", "--", "echo", "hello")
	if err != nil || out != "hello\n" {
		t.Fatalf("kubectl exec echo: %q, %v\n%s", out, err, stderr)
	}
	out, stderr, err = ke.kubectl(t, strings.NewReader("from stdin"), "exec", "-i", "web", "-c", "c", "--", "cat")
	if err != nil || out != "from stdin" {
		t.Fatalf("kubectl exec -i cat: %q, %v\n%s", out, err, stderr)
	}
	_, stderr, err = ke.kubectl(t, nil, "exec", "web", "--", "sh", "-c", "echo oops >&2; exit 3")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 || !strings.Contains(stderr, "oops") || !strings.Contains(stderr, "command terminated with exit code 3") {
		t.Fatalf("kubectl exec exit 3: %v\n%s", err, stderr)
	}
	_, stderr, err = ke.kubectl(t, nil, "exec", "web", "-c", "nope", "--", "true")
	if err == nil || !strings.Contains(stderr, "container nope is not valid for pod web") {
		t.Fatalf("kubectl exec -c nope: %v\n%s", err, stderr)
	}
}

// TestKubeletExecTTY: a TTY session over SPDY and over WebSocket passes
// the client's terminal sizes on to the kubelet. The command, a cat,
// ends only once the test has seen the size there and closed stdin.
func TestKubeletExecTTY(t *testing.T) {
	ke := startKubelet(t)
	u := ke.Clientset.CoreV1().RESTClient().Post().Resource("pods").Namespace(ke.ns).Name("web").SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Command: []string{"cat"}, Stdin: true, Stdout: true, TTY: true}, scheme.ParameterCodec).URL()
	spdyExec, err := remotecommand.NewSPDYExecutor(ke.Config, http.MethodPost, u)
	if err != nil {
		t.Fatal(err)
	}
	wsExec, err := remotecommand.NewWebSocketExecutor(ke.Config, http.MethodGet, u.String())
	if err != nil {
		t.Fatal(err)
	}
	for i, ex := range []remotecommand.Executor{spdyExec, wsExec} {
		var out safeBuffer
		stdin, input := io.Pipe()
		sizes := &oneSize{size: &remotecommand.TerminalSize{Width: uint16(100 + i), Height: 40}}
		done := make(chan error, 1)
		go func() {
			done <- ex.StreamWithContext(e2eutil.Ctx(t), remotecommand.StreamOptions{Stdin: stdin, Stdout: &out, Tty: true, TerminalSizeQueue: sizes})
		}()
		want := kubelettest.TerminalSize{Width: uint16(100 + i), Height: 40}
		e2eutil.Eventually(t, 30*time.Second, "the kubelet saw the terminal size", func(context.Context) (bool, error) {
			return slices.Contains(ke.k.Resizes(), want), nil
		})
		_, _ = input.Write([]byte("typed\n"))
		input.Close()
		if err := <-done; err != nil || !strings.Contains(out.String(), "typed") {
			t.Fatalf("executor %d: %q, %v", i, out.String(), err)
		}
	}
}

// safeBuffer is a bytes.Buffer for one writer and one reader at a time.
type safeBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *safeBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *safeBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// oneSize gives one terminal size, then ends.
type oneSize struct{ size *remotecommand.TerminalSize }

func (q *oneSize) Next() *remotecommand.TerminalSize {
	s := q.size
	q.size = nil
	return s
}

// TestKubeletAttachAndCp: kubectl attach -i echoes through the test
// kubelet's `cat` container; kubectl cp copies a file in and out with tar
// over exec.
func TestKubeletAttachAndCp(t *testing.T) {
	ke := startKubelet(t)
	out, stderr, err := ke.kubectl(t, strings.NewReader("ping\n"), "attach", "-i", "web")
	if err != nil || !strings.Contains(out, "ping\n") {
		t.Fatalf("kubectl attach -i: %q, %v\n%s", out, err, stderr)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(src, []byte("copied\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := ke.kubectl(t, nil, "cp", src, ke.ns+"/web:f.txt"); err != nil {
		t.Fatalf("kubectl cp in: %v\n%s", err, stderr)
	}
	podDir, _ := ke.k.PodDir(ke.ns, "web")
	if data, err := os.ReadFile(filepath.Join(podDir, "f.txt")); err != nil || string(data) != "copied\n" {
		t.Fatalf("in the container: %q, %v", data, err)
	}
	back := filepath.Join(dir, "back.txt")
	if _, stderr, err := ke.kubectl(t, nil, "cp", ke.ns+"/web:f.txt", back); err != nil {
		t.Fatalf("kubectl cp out: %v\n%s", err, stderr)
	}
	if data, err := os.ReadFile(back); err != nil || string(data) != "copied\n" {
		t.Fatalf("copied back: %q, %v", data, err)
	}
}

// TestKubeletPortForward: kubectl port-forward carries a connection to
// the pod's port (on the test kubelet, the same port on loopback).
func TestKubeletPortForward(t *testing.T) {
	ke := startKubelet(t)
	// kubectl forwards to running pods only.
	pod, err := ke.Clientset.CoreV1().Pods(ke.ns).Get(e2eutil.Ctx(t), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodRunning
	if _, err := ke.Clientset.CoreV1().Pods(ke.ns).UpdateStatus(e2eutil.Ctx(t), pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	backend, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer backend.Close()
	go echoServer(backend)
	podPort := backend.Addr().(*net.TCPAddr).Port
	local := freePort(t)

	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(c, testkit.Kubectl(t), "--kubeconfig", ke.Kubeconfig, "-n", ke.ns, "port-forward", "pod/web",
		"--address=127.0.0.1", strconv.Itoa(local)+":"+strconv.Itoa(podPort), "-v=4")
	cmd.Env = append(os.Environ(), "KUBERC=off", "KUBECACHEDIR="+t.TempDir())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr safeBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "Forwarding from 127.0.0.1:"+strconv.Itoa(local)) {
		t.Fatalf("kubectl port-forward said %q, %v\n%s", line, err, stderr.String())
	}
	conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(local), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	if _, err := conn.Write([]byte("forwarded\n")); err != nil {
		t.Fatal(err)
	}
	got, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || got != "forwarded\n" {
		t.Fatalf("through the forward: %q, %v\n%s", got, err, stderr.String())
	}
	// kubectl's WebSocket was tunnelled to the kubelet's SPDY by the
	// server: kubectl did not fall back, the kubelet saw no WebSocket.
	if strings.Contains(stderr.String(), "fallback to secondary dialer") {
		t.Errorf("kubectl fell back to SPDY:\n%s", stderr.String())
	}
	reqs := strings.Join(ke.k.Requests(), "\n")
	if !strings.Contains(reqs, "POST /portForward/"+ke.ns+"/web") || strings.Contains(reqs, "GET /portForward/") {
		t.Errorf("kubelet requests:\n%s", reqs)
	}
}

func echoServer(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			_, _ = io.Copy(c, c)
		}()
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestKubeletExecNeedsCreate: a WebSocket exec is a GET, authorized as
// get; kube also asks for create, so a user allowed only get on
// pods/exec is refused whichever protocol kubectl uses.
func TestKubeletExecNeedsCreate(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(tokens, []byte("tok-viewer,viewer,uid-viewer\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ke := startKubelet(t, "--token-auth-file", tokens)
	grant := func(verbs ...string) {
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "exec"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"pods/exec"}, Verbs: verbs}}}
		if _, err := ke.Clientset.RbacV1().Roles(ke.ns).Update(e2eutil.Ctx(t), role, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ke.Clientset.RbacV1().Roles(ke.ns).Create(e2eutil.Ctx(t), &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "exec"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "exec"}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "exec"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "viewer"}}}
	if _, err := ke.Clientset.RbacV1().RoleBindings(ke.ns).Create(e2eutil.Ctx(t), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(ke.DataDir, "pki", "ca.crt")
	execAs := func() (string, string, error) {
		return testkit.RunKubectl(t, "", nil, "--server", ke.URL, "--certificate-authority", ca, "--token", "tok-viewer",
			"-n", ke.ns, "exec", "web", "--", "echo", "allowed")
	}
	grant("get")
	if _, stderr, err := execAs(); err == nil || !strings.Contains(stderr, `pods "web" is forbidden`) {
		t.Fatalf("exec with get only: %v\n%s", err, stderr)
	}
	grant("get", "create")
	e2eutil.Eventually(t, 30*time.Second, "exec allowed with create", func(context.Context) (bool, error) {
		out, _, err := execAs()
		return err == nil && out == "allowed\n", nil
	})
}

// TestKubeletPortForwardTunnelRefused: a tunnelled port forward whose
// protocol the kubelet refuses gets the kubelet's answer on a connection
// that is closed after it; one that names no tunnelling protocol gets
// kube's 400.
func TestKubeletPortForwardTunnelRefused(t *testing.T) {
	ke := startKubelet(t)
	tlsConfig, err := rest.TLSConfigFor(ke.Config)
	if err != nil {
		t.Fatal(err)
	}
	u := strings.Replace(ke.URL, "https://", "wss://", 1) + "/api/v1/namespaces/" + ke.ns + "/pods/web/portforward?ports=80"
	for _, c := range []struct {
		protocol string
		code     int
		body     string
	}{
		{"SPDY/3.1+portforward.v9.k8s.io", http.StatusForbidden, "unable to upgrade: unable to negotiate protocol"},
		{"v5.channel.k8s.io", http.StatusBadRequest, ""},
	} {
		d := gwebsocket.Dialer{TLSClientConfig: tlsConfig, Subprotocols: []string{c.protocol}, HandshakeTimeout: 30 * time.Second}
		conn, res, err := d.DialContext(e2eutil.Ctx(t), u, nil)
		if err == nil {
			conn.Close()
			t.Fatalf("%s: the upgrade passed", c.protocol)
		}
		if res == nil {
			t.Fatalf("%s: %v", c.protocol, err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != c.code || !strings.Contains(string(body), c.body) {
			t.Errorf("%s: %d %q, want %d %q", c.protocol, res.StatusCode, body, c.code, c.body)
		}
		// Connection: close, which ReadResponse turns into Close.
		if c.code == http.StatusForbidden && !res.Close {
			t.Errorf("%s: the refused tunnel's connection stays open: %v", c.protocol, res.Header)
		}
	}
}
