package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// names lists the names of objects, comma separated, in list order.
func names[T any, PT interface {
	*T
	GetName() string
}](items []T) string {
	out := make([]string, len(items))
	for i := range items {
		out[i] = PT(&items[i]).GetName()
	}
	return strings.Join(out, ",")
}

// requestLog records what a client's transport sees.
type requestLog struct {
	mu      sync.Mutex // guards entries
	entries []string
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return e2eutil.RoundTripperFunc(func(r *http.Request) (*http.Response, error) {
		l.add(r.URL.RequestURI())
		return rt.RoundTrip(r)
	})
}

func (l *requestLog) add(entry string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, entry)
}

func (l *requestLog) seen(part string) bool {
	for _, u := range l.list() {
		if strings.Contains(u, part) {
			return true
		}
	}
	return false
}

func (l *requestLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.entries...)
}

// expiredSoon retries call until it fails with 410 Expired, as it does
// once the watch cache has followed a compaction, and returns that Status.
func expiredSoon(t *testing.T, call func() error) *metav1.Status {
	t.Helper()
	var last error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if last = call(); apierrors.IsResourceExpired(last) || apierrors.IsGone(last) {
			s := last.(apierrors.APIStatus).Status()
			return &s
		}
	}
	t.Fatalf("no 410 Expired within 10s after a compaction; last answer %v", last)
	return nil
}
