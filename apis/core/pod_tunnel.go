package core

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	gwebsocket "github.com/gorilla/websocket"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/httpstream"
	pfconsts "k8s.io/apimachinery/pkg/util/portforward"
	"k8s.io/client-go/tools/portforward"

	"github.com/capstan-io/capstan/proxy"
)

// portForwardTunnel serves port forwarding to a client that tunnels SPDY
// through a WebSocket (kubectl's first try): the server speaks SPDY to the
// kubelet, and the bytes of that connection travel in the WebSocket's
// binary messages, as kube's tunnelling handler does. The kubelet picks
// the port forwarding protocol; the WebSocket is accepted only once it
// has, so a refusal reaches the client as the kubelet's answer.
type portForwardTunnel struct {
	location  *url.URL
	transport http.RoundTripper // an upgrade transport: no connection kept
}

// spdyHeader is the Upgrade value of SPDY.
const spdyHeader = "SPDY/3.1"

func (t *portForwardTunnel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var protocols []string
	for _, p := range gwebsocket.Subprotocols(r) {
		if strings.HasPrefix(p, pfconsts.WebsocketsSPDYTunnelingPrefix) && strings.HasSuffix(p, pfconsts.KubernetesSuffix) {
			protocols = append(protocols, strings.TrimPrefix(p, pfconsts.WebsocketsSPDYTunnelingPrefix))
		}
	}
	if len(protocols) == 0 {
		http.Error(w, "unable to upgrade: no tunneling spdy protocols provided", http.StatusBadRequest)
		return
	}
	// The tunnel lasts until one side closes it, not until the request's
	// deadline.
	req, err := http.NewRequestWithContext(context.WithoutCancel(r.Context()), http.MethodPost, t.location.String(), nil)
	if err != nil {
		proxy.WriteStatus(w, proxy.StatusOf(err))
		return
	}
	req.Header.Set(httpstream.HeaderConnection, httpstream.HeaderUpgrade)
	req.Header.Set(httpstream.HeaderUpgrade, spdyHeader)
	for _, p := range protocols {
		req.Header.Add(httpstream.HeaderProtocolVersion, p)
	}
	res, err := t.transport.RoundTrip(req)
	if err != nil {
		proxy.WriteStatus(w, proxy.StatusOf(apierrors.NewServiceUnavailable(fmt.Sprintf("error trying to reach service: %v", err))))
		return
	}
	backend, ok := res.Body.(io.ReadWriteCloser)
	if res.StatusCode != http.StatusSwitchingProtocols || !ok {
		refused(w, res)
		return
	}
	if !strings.EqualFold(res.Header.Get(httpstream.HeaderUpgrade), spdyHeader) {
		backend.Close()
		http.Error(w, "unable to upgrade: missing upgrade headers in response", http.StatusInternalServerError)
		return
	}
	upgrader := gwebsocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }, Subprotocols: []string{}}
	if chosen := strings.TrimSpace(res.Header.Get(httpstream.HeaderProtocolVersion)); chosen != "" {
		upgrader.Subprotocols = []string{pfconsts.WebsocketsSPDYTunnelingPrefix + chosen}
	}
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		backend.Close() // Upgrade answered the client
		return
	}
	splice(portforward.NewTunnelingConnection("server", ws), backend)
}

// refused passes the kubelet's refusal on, on a connection that closes
// after it: nothing the client sends next may be taken for a tunnel.
func refused(w http.ResponseWriter, res *http.Response) {
	defer res.Body.Close()
	for k, vs := range res.Header {
		w.Header()[k] = vs
	}
	w.Header().Set("Connection", "close")
	code := res.StatusCode
	if code < http.StatusBadRequest {
		code = http.StatusInternalServerError
	}
	w.WriteHeader(code)
	_, _ = io.Copy(w, io.LimitReader(res.Body, 1<<20))
}

// splice copies between a and b both ways until either side ends, then
// closes both and returns once both copies have.
func splice(a, b io.ReadWriteCloser) {
	var once sync.Once
	closeBoth := func() {
		once.Do(func() {
			a.Close()
			b.Close()
		})
	}
	var wg sync.WaitGroup
	wg.Add(2)
	copyTo := func(dst io.Writer, src io.Reader) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		closeBoth()
	}
	go copyTo(a, b)
	go copyTo(b, a)
	wg.Wait()
}
