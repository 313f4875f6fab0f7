package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/websocket"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	protobufserializer "k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/rest"

	"github.com/capstan-io/capstan/apis/scheme"
)

// dialWatch opens a WebSocket watch of path as a browser would: the
// bearer token, if any, as a subprotocol beside base64.channel.k8s.io.
func dialWatch(t *testing.T, e *e2eutil.Env, path, accept, token string) (*websocket.Conn, error) {
	t.Helper()
	u, err := url.Parse(e.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	u.Scheme = "wss"
	cfg, err := websocket.NewConfig(u.String(), "https://localhost")
	if err != nil {
		t.Fatal(err)
	}
	tlsCfg, err := rest.TLSConfigFor(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	cfg.TlsConfig = tlsCfg
	if token != "" {
		// A browser has no client certificate: the token is all it shows.
		cfg.TlsConfig = &tls.Config{RootCAs: tlsCfg.RootCAs, ServerName: tlsCfg.ServerName}
		cfg.Protocol = []string{"base64url.bearer.authorization.k8s.io." + base64.RawURLEncoding.EncodeToString([]byte(token)), "base64.channel.k8s.io"}
	}
	if accept != "" {
		cfg.Header = http.Header{"Accept": {accept}}
	}
	cfg.Dialer = nil
	return websocket.DialConfig(cfg)
}

// TestWatchWebSocket: ?watch=true with a WebSocket upgrade streams one
// message per event: the JSON WatchEvent as a text message, the protobuf
// one as a binary message without the length prefix of the HTTP stream;
// a browser authenticates with its token as a subprotocol.
func TestWatchWebSocket(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(tokens, []byte("tok-admin,admin,uid-admin,system:masters\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := e2eutil.Start(t, "--token-auth-file", tokens)
	ns := e.Namespace(t)
	path := "/api/v1/namespaces/" + ns + "/configmaps?watch=true"

	jsonWS, err := dialWatch(t, e, path, "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer jsonWS.Close()
	protoWS, err := dialWatch(t, e, path, protobuf, "tok-admin")
	if err != nil {
		t.Fatal(err)
	}
	defer protoWS.Close()
	if got := protoWS.Config().Protocol; len(got) != 1 || got[0] != "base64.channel.k8s.io" {
		t.Errorf("negotiated subprotocols %q, want the token left out", got)
	}
	e.ConfigMap(t, ns, "one", nil)

	var text string
	deadline := time.Now().Add(time.Minute)
	_ = jsonWS.SetReadDeadline(deadline)
	if err := websocket.Message.Receive(jsonWS, &text); err != nil {
		t.Fatalf("JSON message: %v", err)
	}
	var ev struct {
		Type   string
		Object corev1.ConfigMap
	}
	if err := json.Unmarshal([]byte(text), &ev); err != nil || ev.Type != "ADDED" || ev.Object.Name != "one" || ev.Object.Kind != "ConfigMap" {
		t.Errorf("JSON message %q: %+v, %v", text, ev, err)
	}

	var data []byte
	_ = protoWS.SetReadDeadline(deadline)
	if err := websocket.Message.Receive(protoWS, &data); err != nil {
		t.Fatalf("protobuf message: %v", err)
	}
	var pev metav1.WatchEvent
	if err := pev.Unmarshal(data); err != nil || pev.Type != "ADDED" {
		t.Fatalf("protobuf message (%d bytes): %+v, %v", len(data), pev, err)
	}
	obj, _, err := protobufserializer.NewSerializer(scheme.Scheme, scheme.Scheme).Decode(pev.Object.Raw, nil, nil)
	if cm, ok := obj.(*corev1.ConfigMap); err != nil || !ok || cm.Name != "one" {
		t.Errorf("protobuf object: %#v, %v", obj, err)
	}
}

// TestWatchWebSocketRefused: a bad token subprotocol is 401 with kube's
// reasons, and a token without another subprotocol to echo is refused.
func TestWatchWebSocketRefused(t *testing.T) {
	e := e2eutil.Start(t)
	path := "/api/v1/namespaces/default/configmaps?watch=true"
	for name, protocols := range map[string][]string{
		"bad encoding":   {"base64url.bearer.authorization.k8s.io.***", "base64.channel.k8s.io"},
		"unknown token":  {"base64url.bearer.authorization.k8s.io." + base64.RawURLEncoding.EncodeToString([]byte("nope")), "x"},
		"only the token": {"base64url.bearer.authorization.k8s.io." + base64.RawURLEncoding.EncodeToString([]byte("nope"))},
	} {
		t.Run(name, func(t *testing.T) {
			hc := &http.Client{Transport: &http.Transport{TLSClientConfig: insecureTLS(t, e)}}
			req, _ := http.NewRequest(http.MethodGet, e.URL+path, nil)
			req.Header.Set("Connection", "Upgrade")
			req.Header.Set("Upgrade", "websocket")
			req.Header.Set("Sec-WebSocket-Version", "13")
			req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
			req.Header.Set("Sec-WebSocket-Protocol", strings.Join(protocols, ","))
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("status %d, want 401", resp.StatusCode)
			}
		})
	}
}

// insecureTLS trusts the server's CA and presents no client certificate.
func insecureTLS(t *testing.T, e *e2eutil.Env) *tls.Config {
	t.Helper()
	cfg, err := rest.TLSConfigFor(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{RootCAs: cfg.RootCAs, ServerName: cfg.ServerName}
}

// TestWatchListWebSocketTimed: a WatchList over a WebSocket ends its
// initial events with the annotated bookmark, and its latency is recorded
// in apiserver_watch_list_duration_seconds as over HTTP.
func TestWatchListWebSocketTimed(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	// Pod templates: a resource no loop of the server watches, so that
	// only this watch moves the count.
	count := func() float64 {
		body, err := e.Clientset.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(e2eutil.Ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		var n float64
		for _, line := range strings.Split(string(body), "\n") {
			if strings.HasPrefix(line, "apiserver_watch_list_duration_seconds_count{") && strings.Contains(line, `resource="podtemplates"`) {
				var v float64
				if _, err := fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v); err == nil {
					n += v
				}
			}
		}
		return n
	}
	before := count()
	ws, err := dialWatch(t, e, "/api/v1/namespaces/"+ns+"/podtemplates?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true", "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	_ = ws.SetReadDeadline(time.Now().Add(time.Minute))
	for {
		var text string
		if err := websocket.Message.Receive(ws, &text); err != nil {
			t.Fatalf("no end of the initial events: %v", err)
		}
		var ev struct {
			Type   string
			Object metav1.PartialObjectMetadata
		}
		if err := json.Unmarshal([]byte(text), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type == "BOOKMARK" && ev.Object.Annotations[metav1.InitialEventsAnnotationKey] == "true" {
			break
		}
	}
	e2eutil.Eventually(t, 30*time.Second, "the WatchList's latency recorded", func(context.Context) (bool, error) {
		return count() > before, nil
	})
}
