package proxy_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// upgrader answers an upgrade to "test-echo" with 101 and then echoes
// bytes, unless the request's path asks for a refusal (/refuse: 403,
// /confused: 200).
func upgrader(t *testing.T) *url.URL {
	return front(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/refuse":
			http.Error(w, "upgrade refused", http.StatusForbidden)
			return
		case "/confused":
			_, _ = io.WriteString(w, "not an upgrade")
			return
		}
		if r.Header.Get("Upgrade") != "test-echo" {
			http.Error(w, "no upgrade", http.StatusBadRequest)
			return
		}
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test-echo\r\n\r\n")
		_ = rw.Flush()
		_, _ = io.Copy(conn, rw)
	}))
}

// upgradeThrough sends an upgrade request for path through a proxy to the
// upgrader over a raw connection, and returns the connection (with a
// deadline so that a test never hangs) and the answer.
func upgradeThrough(t *testing.T, path string) (net.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	srv := front(t, to(t, upgrader(t), path))
	conn, err := net.Dial("tcp", srv.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(conn, "GET /x HTTP/1.1\r\nHost: capstan\r\nConnection: Upgrade\r\nUpgrade: test-echo\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	return conn, br, res
}

func TestUpgradeIsTunnelled(t *testing.T) {
	conn, br, res := upgradeThrough(t, "/")
	if res.StatusCode != http.StatusSwitchingProtocols || res.Header.Get("Upgrade") != "test-echo" {
		t.Fatalf("got %s %v", res.Status, res.Header)
	}
	for _, msg := range []string{"ping\n", "pong\n"} {
		if _, err := io.WriteString(conn, msg); err != nil {
			t.Fatal(err)
		}
		got, err := br.ReadString('\n')
		if err != nil || got != msg {
			t.Fatalf("echo of %q: %q, %v", msg, got, err)
		}
	}
}

// CVE-2018-1002105: the backend's refusal reaches the client, and the
// client's connection ends with it.
func TestRefusedUpgradeClosesTheConnection(t *testing.T) {
	_, br, res := upgradeThrough(t, "/refuse")
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusForbidden || string(body) != "upgrade refused\n" {
		t.Fatalf("got %s %q", res.Status, body)
	}
	// Whatever follows finds the connection closed, not a tunnel and not
	// a connection ready for the next request.
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("after a refused upgrade, read: %v; want EOF", err)
	}
}

func TestUpgradeAnsweredWithSuccessIsAnError(t *testing.T) {
	_, _, res := upgradeThrough(t, "/confused")
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusInternalServerError {
		t.Fatalf("got %s %s", res.Status, body)
	}
	if want := `"message":"invalid upgrade response: status code 200"`; !strings.Contains(string(body), want) {
		t.Errorf("body %s lacks %s", body, want)
	}
}
