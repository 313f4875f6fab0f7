package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"net"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/util/wait"
)

// TestRunEtcd starts `capstan etcd` with the flags envtest gives etcd,
// waits for /health as envtest does, stores a key and stops it.
func TestRunEtcd(t *testing.T) {
	client := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	args := []string{
		fmt.Sprintf("--listen-peer-urls=http://127.0.0.1:%d", freePort(t)),
		"--advertise-client-urls=" + client, "--listen-client-urls=" + client,
		"--data-dir=" + t.TempDir(), "--unsafe-no-fsync=true", "--log-level=error",
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- RunEtcd(ctx, args, io.Discard) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("etcd stopped with %v", err)
		}
	}()
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-done:
			return false, fmt.Errorf("etcd stopped: %v", err)
		default:
		}
		resp, err := http.Get(client + "/health")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("etcd's /health: %v", err)
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{client}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	if _, err := c.Put(rctx, "/k", "v"); err != nil {
		t.Fatalf("put: %v", err)
	}
	got, err := c.Get(rctx, "/k")
	if err != nil || len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "v" {
		t.Fatalf("get: %v %v", got, err)
	}
}

func TestEtcdFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  string // "" for none
	}{
		{args: []string{"--data-dir=/x", "--unsafe-no-fsync", "--listen-client-urls=http://127.0.0.1:1", "--advertise-client-urls=http://127.0.0.1:1"}},
		{args: []string{"--nope"}, err: "flag provided but not defined: -nope"},
		{args: []string{"--initial-cluster-state=maybe"}, err: "invalid value"},
		{args: []string{"--listen-client-urls=127.0.0.1:2379"}, err: "invalid value"},
		{args: []string{"stray"}, err: `"stray" is not a flag`},
	} {
		var out bytes.Buffer
		_, err := parseEtcdFlags(tc.args, &out)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%v: error %v, want one containing %q", tc.args, err, tc.err)
		}
	}
}

// TestEtcdHelp: envtest finds --unsafe-no-fsync in etcd's help by a
// line starting with two dashes.
func TestEtcdHelp(t *testing.T) {
	var out bytes.Buffer
	if err := RunEtcd(context.Background(), []string{"--help"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "\n  --unsafe-no-fsync\n") {
		t.Errorf("help lacks --unsafe-no-fsync:\n%s", out.String())
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
