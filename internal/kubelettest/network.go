package kubelettest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
)

// NodeIP is the routed test node's address (RoutedNode), in its serving
// certificate.
const NodeIP = "192.0.2.10"

// testNet is TEST-NET-1: global unicast addresses no real network uses,
// which stand for the addresses of nodes and pods in tests.
var testNet = &net.IPNet{IP: net.IPv4(192, 0, 2, 0), Mask: net.CIDRMask(24, 32)}

// ClusterDial is a test cluster network (testserver.WithClusterDialer): an
// address of TEST-NET-1 leads to the same port on 127.0.0.1, where a test
// kubelet or backend listens; any other address is dialled as it is.
func ClusterDial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); ip != nil && testNet.Contains(ip) {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// serveLogsIndex lists the node's logs as the kubelet's /logs/ does, with
// links a proxy must rewrite.
func serveLogsIndex(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprint(w, `<pre><a href="/logs/kubelet.log">kubelet.log</a> <a href="pods/">pods/</a></pre>`)
}

// Echo is what /echo/ answers: the request as the kubelet saw it.
type Echo struct {
	Method, Path, Query, Host, Body string
	Header                          http.Header
}

// serveEcho answers any method with the request as JSON.
func serveEcho(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(Echo{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Host: r.Host, Body: string(body), Header: r.Header})
}
