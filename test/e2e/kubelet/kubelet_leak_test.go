package kubelet

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
)

// TestStreamsLeaveNoGoroutines: many log follows, execs and attaches (SPDY
// and WebSocket), port forwards (SPDY and tunnelled in a WebSocket) and
// proxied streams, each cancelled by its client mid-stream, leave the
// process (server and test kubelet) with the goroutines it had before.
func TestStreamsLeaveNoGoroutines(t *testing.T) {
	pe := startProxy(t)
	pe.k.AppendLog(pe.ns, "backend", "c", "line\n")
	streams := map[string]func(ctx context.Context) error{
		"log":                pe.followLog,
		"exec spdy":          func(ctx context.Context) error { return pe.cancelledExec(ctx, "exec", false) },
		"exec websocket":     func(ctx context.Context) error { return pe.cancelledExec(ctx, "exec", true) },
		"attach websocket":   func(ctx context.Context) error { return pe.cancelledExec(ctx, "attach", true) },
		"portforward spdy":   func(ctx context.Context) error { return pe.portForward(ctx, false) },
		"portforward tunnel": func(ctx context.Context) error { return pe.portForward(ctx, true) },
		"proxy":              pe.proxiedStream,
	}
	run := func(rounds int) {
		for range rounds {
			for name, stream := range streams {
				c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				err := stream(c)
				cancel()
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
		}
		pe.hc.CloseIdleConnections()
	}
	// The first rounds make what lasts (connection pools, caches) and
	// start what ends on its own later (idle connections): the second
	// batch is compared with the first.
	const rounds = 40
	run(rounds)
	first := settledGoroutines()
	run(rounds)
	second := settledGoroutines()
	t.Logf("goroutines: %d after %d cancelled streams, %d after as many again", first, rounds*len(streams), second)
	// A goroutine left by each stream of one kind would be 40 more; a few
	// come and go with the server's own loops.
	if second > first+rounds/2 {
		var stacks strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
		t.Fatalf("%d goroutines, %d before the second batch:\n%s", second, first, stacks.String())
	}
}

// settledGoroutines is the number of goroutines once it has not changed
// for two seconds, or after a minute.
func settledGoroutines() int {
	deadline := time.Now().Add(time.Minute)
	n, same := runtime.NumGoroutine(), 0
	for same < 8 && time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
		if m := runtime.NumGoroutine(); m == n {
			same++
		} else {
			n, same = m, 0
		}
	}
	return n
}

// followLog reads a line of a followed log and goes away.
func (pe *proxyEnv) followLog(ctx context.Context) error {
	s, err := pe.Clientset.CoreV1().Pods(pe.ns).GetLogs("backend", &corev1.PodLogOptions{Follow: true}).Stream(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	_, err = bufio.NewReader(s).ReadString('\n')
	return err
}

// cancelledExec runs cat, sees its echo and cancels the stream.
func (pe *proxyEnv) cancelledExec(ctx context.Context, subresource string, websocket bool) error {
	var opts k8sruntime.Object = &corev1.PodExecOptions{Command: []string{"cat"}, Stdin: true, Stdout: true}
	if subresource == "attach" {
		opts = &corev1.PodAttachOptions{Stdin: true, Stdout: true}
	}
	u := pe.Clientset.CoreV1().RESTClient().Post().Resource("pods").Namespace(pe.ns).Name("backend").SubResource(subresource).
		VersionedParams(opts, scheme.ParameterCodec).URL()
	var ex remotecommand.Executor
	var err error
	if websocket {
		ex, err = remotecommand.NewWebSocketExecutor(pe.Config, http.MethodGet, u.String())
	} else {
		ex, err = remotecommand.NewSPDYExecutor(pe.Config, http.MethodPost, u)
	}
	if err != nil {
		return err
	}
	c, cancel := context.WithCancel(ctx)
	defer cancel()
	stdin, input := io.Pipe()
	defer input.Close()
	output, stdout := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- ex.StreamWithContext(c, remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout}) }()
	if _, err := input.Write([]byte("echo\n")); err != nil {
		return err
	}
	if _, err := bufio.NewReader(output).ReadString('\n'); err != nil {
		return err
	}
	cancel()
	output.Close()
	<-done
	return nil
}

// portForward opens a forwarding connection, one stream pair in it, and
// closes it.
func (pe *proxyEnv) portForward(ctx context.Context, tunnel bool) error {
	u := pe.Clientset.CoreV1().RESTClient().Post().Resource("pods").Namespace(pe.ns).Name("backend").SubResource("portforward").URL()
	var dialer httpstream.Dialer
	if tunnel {
		d, err := portforward.NewSPDYOverWebsocketDialer(u, pe.Config)
		if err != nil {
			return err
		}
		dialer = d
	} else {
		rt, upgrader, err := spdy.RoundTripperFor(pe.Config)
		if err != nil {
			return err
		}
		dialer = spdy.NewDialer(upgrader, &http.Client{Transport: rt}, http.MethodPost, u)
	}
	conn, _, err := dialer.Dial(portforward.PortForwardProtocolV1Name)
	if err != nil {
		return err
	}
	defer conn.Close()
	h := http.Header{}
	h.Set(corev1.StreamType, corev1.StreamTypeError)
	h.Set(corev1.PortHeader, fmt.Sprint(pe.port))
	h.Set(corev1.PortForwardRequestIDHeader, "0")
	if _, err := conn.CreateStream(h); err != nil {
		return err
	}
	return nil
}

// proxiedStream reads the first part of an endless answer through
// pods/proxy and goes away.
func (pe *proxyEnv) proxiedStream(ctx context.Context) error {
	c, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(c, http.MethodGet, pe.URL+"/api/v1/namespaces/"+pe.ns+"/pods/backend/proxy/stream", nil)
	if err != nil {
		return err
	}
	res, err := pe.hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if _, err := bufio.NewReader(res.Body).ReadString('\n'); err != nil {
		return fmt.Errorf("%d: %w", res.StatusCode, err)
	}
	return nil
}
