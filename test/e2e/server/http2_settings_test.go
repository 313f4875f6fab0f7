package server

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"crypto/tls"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// The server's HTTP/2 SETTINGS are kube-apiserver's: clients decide from
// them how many connections their requests and watches take.
func TestHTTP2Settings(t *testing.T) {
	cases := []struct {
		name  string
		flags []string
		want  map[http2.SettingID]uint32
	}{
		{"defaults", nil, map[http2.SettingID]uint32{
			http2.SettingMaxConcurrentStreams: 100,
			http2.SettingMaxFrameSize:         256 << 10,
			http2.SettingInitialWindowSize:    256 << 10,
		}},
		{"flag", []string{"--http2-max-streams-per-connection=1000"}, map[http2.SettingID]uint32{
			http2.SettingMaxConcurrentStreams: 1000,
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := e2eutil.Start(t, tc.flags...)
			got := serverSettings(t, strings.TrimPrefix(s.URL, "https://"))
			for id, want := range tc.want {
				if got[id] != want {
					t.Errorf("%v = %d, want %d (all: %v)", id, got[id], want, got)
				}
			}
		})
	}
}

// serverSettings opens an HTTP/2 connection to addr and returns the
// settings of the server's first SETTINGS frame.
func serverSettings(t *testing.T, addr string) map[http2.SettingID]uint32 {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if p := conn.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("negotiated %q, want h2", p)
	}
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		sf, ok := f.(*http2.SettingsFrame)
		if !ok || sf.IsAck() {
			continue
		}
		got := map[http2.SettingID]uint32{}
		_ = sf.ForeachSetting(func(s http2.Setting) error {
			got[s.ID] = s.Val
			return nil
		})
		return got
	}
}
