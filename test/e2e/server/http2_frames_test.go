package server

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"bytes"
	"crypto/tls"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// TestResponsesEndWithData checks that a response that is not streamed
// ends with its last DATA frame, not with an empty DATA frame of its own:
// that frame costs a hand-off to the connection's writer and a write of
// its own. Lists of several sizes (one frame, several, past the HTTP/2
// server's 4 KiB handler buffer) and a GET are read frame by frame.
func TestResponsesEndWithData(t *testing.T) {
	e := e2eutil.Start(t)
	c := e2eutil.Ctx(t)
	for _, n := range []int{1, 20, 100} {
		ns := fmt.Sprintf("frames-%d", n)
		if _, err := e.Clientset.CoreV1().Namespaces().Create(c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%03d", i)}, Data: map[string]string{"d": strings.Repeat("x", 256)}}
			if _, err := e.Clientset.CoreV1().ConfigMaps(ns).Create(c, cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	paths := []string{
		"/api/v1/namespaces/frames-1/configmaps",
		"/api/v1/namespaces/frames-20/configmaps",
		"/api/v1/namespaces/frames-100/configmaps",
		"/api/v1/namespaces/frames-100/configmaps/cm-007",
	}
	fc := dialFrames(t, e.Server.Config)
	for _, path := range paths {
		for _, accept := range []string{"application/vnd.kubernetes.protobuf", "application/json"} {
			status, data := fc.get(t, path, accept)
			if status != "200" || len(data) == 0 {
				t.Fatalf("GET %s (%s): status %s, %d DATA frames", path, accept, status, len(data))
			}
			if last := data[len(data)-1]; last == 0 {
				t.Errorf("GET %s (%s): DATA frames %v end with an empty one", path, accept, data)
			}
		}
	}
}

// frameConn is an HTTP/2 connection read frame by frame.
type frameConn struct {
	fr     *http2.Framer
	host   string
	stream uint32
}

func dialFrames(t *testing.T, cfg *rest.Config) *frameConn {
	t.Helper()
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tlsConfig.NextProtos = []string{"h2"}
	host := strings.TrimPrefix(cfg.Host, "https://")
	conn, err := tls.Dial("tcp", host, tlsConfig)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	// A window as large as any response here, so that flow control
	// never splits one.
	if err := fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	if err := fr.WriteWindowUpdate(0, 1<<30); err != nil {
		t.Fatal(err)
	}
	return &frameConn{fr: fr, host: host, stream: 1}
}

// get sends a GET of path and returns the response's status and the
// sizes of its DATA frames, the last one the frame that ended the stream.
func (c *frameConn) get(t *testing.T, path, accept string) (status string, data []int) {
	t.Helper()
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", c.host}, {":path", path}, {"accept", accept}} {
		_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	id := c.stream
	c.stream += 2
	if err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hb.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	for {
		f, err := c.fr.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		if f.Header().StreamID != id {
			continue
		}
		switch f := f.(type) {
		case *http2.MetaHeadersFrame:
			status = f.PseudoValue("status")
			if f.StreamEnded() {
				return status, data
			}
		case *http2.DataFrame:
			data = append(data, len(f.Data()))
			if f.StreamEnded() {
				return status, data
			}
		case *http2.RSTStreamFrame:
			t.Fatalf("GET %s: stream reset: %v", path, f.ErrCode)
		}
	}
}
