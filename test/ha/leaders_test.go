package ha

import (
	"bufio"
	"bytes"
	"context"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/capstan-io/capstan/controlplane"
)

// leaders samples every replica's leader_election_master_status for the
// elected loops' lease, so that two leaders at once, at any sample, fail
// the test.
type leaders struct {
	mu      sync.Mutex // guards the fields below
	most    int        // the most replicas leading at one sample
	current string     // the replica leading at the last sample
	seen    map[string]bool
	samples int
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
	n, who := 0, ""
	for name, c := range clients {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		body, err := c.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(rctx)
		cancel()
		if err == nil && leading(body) {
			n, who = n+1, name
		}
		l.mu.Lock()
		l.last[name] = lastScrape(body, err)
		l.mu.Unlock()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.samples++
	l.most = max(l.most, n)
	l.current = ""
	if n == 1 {
		l.current = who
		l.seen[who] = true
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
