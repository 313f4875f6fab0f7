package ha

import (
	"bufio"
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/capstan-io/capstan/controlplane"
)

// leaders samples every replica's leader_election_master_status for the
// elected loops' lease, so that two leaders at once fail the test.
//
// A sample scrapes the replicas one after another, so a handoff can fall
// between two scrapes of one sample: the old leader scraped before it
// released the Lease, the new one after it took it. Both then show as
// leading although they never led together. A real double leadership
// lasts at least a retry period, many samples, so a replica counts as
// leading "at once" with another only when both led at two consecutive
// samples.
type leaders struct {
	mu       sync.Mutex // guards the fields below
	most     int        // the most replicas leading at two consecutive samples
	handoffs int        // samples that caught a handoff between two scrapes
	current  string     // the replica leading at the last sample
	prev     map[string]bool
	seen     map[string]bool
	samples  int
	// last is what each replica's last scrape said, for a failure.
	last map[string]string
}

// lastScrape is the leader line of a scrape, or its error.
func lastScrape(body []byte, err error) string {
	if err != nil {
		return err.Error()
	}
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "leader_election_master_status") {
			return line
		}
	}
	return "no leader_election_master_status"
}

// sample reads each replica's metric once.
func (l *leaders) sample(ctx context.Context, clients map[string]kubernetes.Interface) {
	// The replicas are scraped together, to keep a sample close to one
	// instant.
	led := map[string]bool{}
	var wg sync.WaitGroup
	for name, c := range clients {
		wg.Go(func() {
			rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			body, err := c.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(rctx)
			cancel()
			l.mu.Lock()
			defer l.mu.Unlock()
			if err == nil && leading(body) {
				led[name] = true
			}
			l.last[name] = lastScrape(body, err)
		})
	}
	wg.Wait()
	l.record(led)
}

// record takes the replicas one sample saw leading.
func (l *leaders) record(led map[string]bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.samples++
	both := 0
	for name := range led {
		if l.prev[name] {
			both++
		}
	}
	switch {
	case len(led) <= 1:
		l.most = max(l.most, len(led))
	case both > 1:
		l.most = max(l.most, both)
	default:
		l.most = max(l.most, 1)
		l.handoffs++
	}
	l.prev = led
	l.current = ""
	for name := range led {
		if len(led) == 1 {
			l.current = name
		}
		l.seen[name] = true
	}
}

func (l *leaders) leader() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.current
}

// leading reports whether a /metrics body says this process leads.
func leading(body []byte) bool {
	want := `leader_election_master_status{name="` + controlplane.ControllersLease + `"} 1`
	s := bufio.NewScanner(bytes.NewReader(body))
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		if strings.TrimSpace(s.Text()) == want {
			return true
		}
	}
	return false
}

// TestLeadersRecord: the sampler's rule on made-up samples, so that a
// double leadership is known to fail TestHA and a handoff caught between
// two scrapes is known not to.
func TestLeadersRecord(t *testing.T) {
	set := func(names ...string) map[string]bool {
		m := map[string]bool{}
		for _, n := range names {
			m[n] = true
		}
		return m
	}
	for _, tc := range []struct {
		name           string
		samples        []map[string]bool
		most, handoffs int
	}{
		{"one leader throughout", []map[string]bool{set("a"), set("a"), set("a")}, 1, 0},
		{"a handoff between two scrapes", []map[string]bool{set("a"), set("a", "b"), set("b")}, 1, 1},
		{"a vacancy, then a new leader", []map[string]bool{set("a"), set(), set("b")}, 1, 0},
		{"two leaders at two samples", []map[string]bool{set("a"), set("a", "b"), set("a", "b")}, 2, 1},
		{"three leaders, two of them twice", []map[string]bool{set("a", "b"), set("a", "b", "c")}, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &leaders{seen: map[string]bool{}, last: map[string]string{}}
			for _, s := range tc.samples {
				l.record(s)
			}
			if l.most != tc.most || l.handoffs != tc.handoffs {
				t.Errorf("most %d, handoffs %d; want %d, %d", l.most, l.handoffs, tc.most, tc.handoffs)
			}
		})
	}
}
