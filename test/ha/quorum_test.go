package ha

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestQuorumLoss: with two of three etcd members gone, a replica answers
// what needs etcd at once with 503 and Retry-After (never a request that
// hangs until its timeout), serves what its watch cache holds, keeps
// watches open, and recovers by itself when the members return: the
// watch opened before the loss sees the first write after it.
func TestQuorumLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process and an etcd cluster")
	}
	dir := t.TempDir()
	etcd := startEtcd(t, dir)
	c := newCluster(t, dir, etcd)
	r := &replica{name: "r0", addr: fmt.Sprintf("127.0.0.1:%d", freePort(t)), dir: t.TempDir()}
	c.startReplica(t, r)
	client := kubernetes.NewForConfigOrDie(c.admin(r.addr))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	cms := client.CoreV1().ConfigMaps("default")
	before, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: before.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	etcd.kill(1)
	etcd.kill(2)
	t.Log("killed etcd members m1 and m2: no quorum")
	raw := rawClient(t, c.admin(r.addr))
	// The first answers may still come from before the member noticed
	// it lost its leader; the answer asked for is the one after.
	if err := poll(ctx, func() bool { return raw.do(ctx, "GET", "/api/v1/namespaces/default/configmaps/before", "").code == 503 }); err != nil {
		t.Fatalf("a consistent GET never answered 503: %v", err)
	}
	for _, req := range []struct{ method, path, body string }{
		{"GET", "/api/v1/namespaces/default/configmaps/before", ""},
		{"GET", "/api/v1/namespaces/default/configmaps", ""},
		{"POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"during"}}`},
		{"PUT", "/api/v1/namespaces/default/configmaps/before", `{"metadata":{"name":"before","resourceVersion":"` + before.ResourceVersion + `"}}`},
		{"DELETE", "/api/v1/namespaces/default/configmaps/before", ""},
	} {
		a := raw.do(ctx, req.method, req.path, req.body)
		t.Logf("%s %s: %d %s Retry-After %q %q in %v", req.method, req.path, a.code, a.reason, a.retryAfter, a.message, a.took.Round(time.Millisecond))
		if a.code != http.StatusServiceUnavailable || a.reason != string(metav1.StatusReasonServiceUnavailable) || a.retryAfter == "" {
			t.Errorf("%s %s without quorum: %d %s (Retry-After %q), want 503 ServiceUnavailable with Retry-After",
				req.method, req.path, a.code, a.reason, a.retryAfter)
		}
	}
	// What the watch cache holds needs no quorum.
	if a := raw.do(ctx, "GET", "/api/v1/namespaces/default/configmaps?resourceVersion=0", ""); a.code != http.StatusOK {
		t.Errorf("a list at resourceVersion 0 without quorum: %d %s %q, want 200 from the watch cache", a.code, a.reason, a.message)
	}
	if a := raw.do(ctx, "GET", "/readyz", ""); a.code == http.StatusOK {
		t.Errorf("/readyz without quorum: %d, want a failed etcd check", a.code)
	}

	etcd.start(t, 1, 2)
	t.Log("started m1 and m2 again")
	// A retrying client's write goes through once etcd has a leader again.
	var after *corev1.ConfigMap
	if err := poll(ctx, func() bool {
		after, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{})
		return err == nil
	}); err != nil {
		t.Fatalf("no create succeeded after the members returned: %v (last %v)", err, err)
	}
	for ev := range w.ResultChan() {
		if ev.Type == watch.Added && ev.Object.(*corev1.ConfigMap).Name == "after" {
			t.Logf("the watch opened before the loss saw %s at %s", after.Name, after.ResourceVersion)
			break
		}
		if ev.Type == watch.Error {
			t.Fatalf("the watch ended with %v", ev.Object)
		}
	}
	if ctx.Err() != nil {
		t.Fatal("the watch opened before the loss did not see the write after it")
	}
	if err := poll(ctx, func() bool { return raw.do(ctx, "GET", "/readyz", "").code == http.StatusOK }); err != nil {
		t.Fatalf("/readyz did not recover: %v", err)
	}
}

// rawHTTP sends requests without client-go's retries, to see the
// server's first answer and its headers.
type rawHTTP struct {
	host   string
	client *http.Client
}

func rawClient(t *testing.T, cfg *rest.Config) *rawHTTP {
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &rawHTTP{host: cfg.Host, client: client}
}

// answer is what a request got: its code, Retry-After, and the Status's
// reason and message when the body is one.
type answer struct {
	code                        int
	retryAfter, reason, message string
	took                        time.Duration
}

func (r *rawHTTP) do(ctx context.Context, method, path, body string) answer {
	// Each request has a deadline well below the server's 60 s request
	// timeout: a hung request shows as code 0 with its error.
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, method, r.host+path, strings.NewReader(body))
	if err != nil {
		return answer{message: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	began := time.Now()
	resp, err := r.client.Do(req)
	if err != nil {
		return answer{message: err.Error(), took: time.Since(began)}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var status metav1.Status
	_ = json.Unmarshal(b, &status)
	return answer{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), reason: string(status.Reason),
		message: status.Message, took: time.Since(began)}
}
