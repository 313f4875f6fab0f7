package attack

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/internal/testkit"
)

// TestReadsDoNotGoBackInTime: once a client has seen a write, no read it
// asks to be at least as new (a consistent read, or resourceVersion with
// NotOlderThan) answers from before it, not even after a restart, when
// the watch cache starts empty (a watch from before it may be refused
// with 410, never answered with older events); a resourceVersion from the
// future is kube's 504 with a Retry-After, not an old answer. No CVE stands for it:
// kube's issue 59848 (stale reads after a restart let a controller act on
// an old world) does.
func TestReadsDoNotGoBackInTime(t *testing.T) {
	t.Parallel()
	s := testkit.StartServer(t)
	c := s.Client(t)
	var written *corev1.ConfigMap
	for i := range 5 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}
		var err error
		if written, err = c.CoreV1().ConfigMaps("default").Create(ctx(t), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rv := rvOf(t, written.ResourceVersion)
	notOlder := func(t *testing.T) {
		t.Helper()
		for _, opts := range []metav1.ListOptions{{}, {ResourceVersion: written.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}} {
			l, err := c.CoreV1().ConfigMaps("default").List(ctx(t), opts)
			if err != nil {
				t.Fatal(err)
			}
			if rvOf(t, l.ResourceVersion) < rv || len(l.Items) < 5 {
				t.Errorf("list %+v: resourceVersion %s with %d items, after a write at %d", opts, l.ResourceVersion, len(l.Items), rv)
			}
		}
		got, err := c.CoreV1().ConfigMaps("default").Get(ctx(t), written.Name, metav1.GetOptions{ResourceVersion: written.ResourceVersion})
		if err != nil || rvOf(t, got.ResourceVersion) < rv {
			t.Errorf("get at %d: %v %v", rv, got, err)
		}
	}
	notOlder(t)
	s.Restart(t)
	c = s.Client(t)
	notOlder(t)

	w, err := c.CoreV1().ConfigMaps("default").Watch(ctx(t), metav1.ListOptions{ResourceVersion: written.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := c.CoreV1().ConfigMaps("default").Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for ev := range w.ResultChan() {
		// The restarted server's watch cache may not reach back to rv:
		// kube's 410 Expired sends the client to list again, which is
		// not a stale answer.
		if st, ok := ev.Object.(*metav1.Status); ok && ev.Type == watch.Error && st.Code == http.StatusGone {
			break
		}
		cm, ok := ev.Object.(*corev1.ConfigMap)
		if !ok || ev.Type != watch.Added {
			t.Fatalf("watch from %d: %s %+v", rv, ev.Type, ev.Object)
		}
		if rvOf(t, cm.ResourceVersion) <= rv {
			t.Fatalf("watch from %d sent %s at %s", rv, cm.Name, cm.ResourceVersion)
		}
		if cm.Name == "after" {
			break
		}
	}

	hc := httpClient(t, s.Config)
	future := strconv.FormatInt(rv+1_000_000, 10)
	a := doWith(t, hc, http.MethodGet, s.URL+"/api/v1/namespaces/default/configmaps?resourceVersionMatch=NotOlderThan&resourceVersion="+future, "", nil)
	st := a.status(t)
	if a.code != http.StatusGatewayTimeout || st.Details == nil || len(st.Details.Causes) == 0 ||
		st.Details.Causes[0].Type != metav1.CauseTypeResourceVersionTooLarge || a.header.Get("Retry-After") == "" {
		t.Errorf("list at a future resourceVersion: %d %v %s", a.code, a.header, a.body)
	}
}

func rvOf(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", s, err)
	}
	return n
}
