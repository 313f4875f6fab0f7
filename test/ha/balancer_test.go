package ha

import (
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
)

// balancer is a TCP load balancer: each connection goes to the next
// backend whose /readyz last passed, as an operator's load balancer with
// a readiness health check sends it.
type balancer struct {
	l        net.Listener
	backends []*backend
	next     atomic.Uint64
}

type backend struct {
	addr  string
	ready atomic.Bool
	conns atomic.Int64 // connections sent to it
}

// startBalancer listens on loopback and checks each backend's /readyz
// every 100 ms with client(addr) until the test ends.
func startBalancer(t *testing.T, addrs []string, client func(addr string) kubernetes.Interface) *balancer {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &balancer{l: l}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); l.Close(); wg.Wait() })
	for _, a := range addrs {
		be := &backend{addr: a}
		b.backends = append(b.backends, be)
		c := client(a)
		wg.Go(func() { be.check(ctx, c) })
	}
	wg.Go(b.serve)
	return b
}

func (b *balancer) addr() string { return b.l.Addr().String() }

func (be *backend) check(ctx context.Context, c kubernetes.Interface) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := c.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(rctx)
		cancel()
		be.ready.Store(err == nil)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (b *balancer) serve() {
	for {
		conn, err := b.l.Accept()
		if err != nil {
			return
		}
		go b.forward(conn)
	}
}

// forward pipes conn to the next ready backend that accepts a
// connection; with none, conn is closed and the client retries.
func (b *balancer) forward(conn net.Conn) {
	defer conn.Close()
	n := len(b.backends)
	start := int(b.next.Add(1))
	for i := range n {
		be := b.backends[(start+i)%n]
		if !be.ready.Load() {
			continue
		}
		up, err := net.DialTimeout("tcp", be.addr, time.Second)
		if err != nil {
			continue
		}
		be.conns.Add(1)
		defer up.Close()
		done := make(chan struct{}, 2)
		go func() { _, _ = io.Copy(up, conn); done <- struct{}{} }()
		go func() { _, _ = io.Copy(conn, up); done <- struct{}{} }()
		<-done
		return
	}
}
