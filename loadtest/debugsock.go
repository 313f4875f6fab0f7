package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"
)

// HeapStats are the Go runtime's heap figures a server reports in its
// heap profile, read right after a garbage collection.
type HeapStats struct {
	HeapInuse uint64 // bytes in spans in use: live objects and their fragmentation
	HeapAlloc uint64 // bytes of live objects
}

// ReadHeapAfterGC asks the pprof server on the unix socket path (a
// server's --debug-socket-path, kube-apiserver's and capstan's alike) for
// its heap profile with gc=1, which collects garbage first, and returns
// the runtime's figures at the end of the profile.
func ReadHeapAfterGC(ctx context.Context, path string) (HeapStats, error) {
	body, err := getDebug(ctx, path, "/debug/pprof/heap?gc=1&debug=1")
	if err != nil {
		return HeapStats{}, err
	}
	return parseHeapProfile(bytes.NewReader(body))
}

// SaveHeapProfile writes the server's heap profile, in pprof's binary
// form, to file: for go tool pprof.
func SaveHeapProfile(ctx context.Context, path, file string) error {
	body, err := getDebug(ctx, path, "/debug/pprof/heap")
	if err != nil {
		return err
	}
	return os.WriteFile(file, body, 0o644)
}

// getDebug GETs uri from the pprof server on the unix socket path.
func getDebug(ctx context.Context, path, uri string) ([]byte, error) {
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://debug"+uri, nil)
	if err != nil {
		return nil, err
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return nil, fmt.Errorf("debug socket %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("debug socket %s: %s: %w", path, uri, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("debug socket %s: %s: HTTP %d", path, uri, resp.StatusCode)
	}
	return body, nil
}

// parseHeapProfile reads the "# HeapInuse = N" and "# HeapAlloc = N" lines
// of a text heap profile (debug=1).
func parseHeapProfile(r io.Reader) (HeapStats, error) {
	var s HeapStats
	var seen int
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		for _, f := range []struct {
			prefix string
			dst    *uint64
		}{{"# HeapInuse = ", &s.HeapInuse}, {"# HeapAlloc = ", &s.HeapAlloc}} {
			if rest, ok := bytes.CutPrefix(line, []byte(f.prefix)); ok {
				n, err := strconv.ParseUint(string(bytes.TrimSpace(rest)), 10, 64)
				if err != nil {
					return s, fmt.Errorf("heap profile: %q: %w", line, err)
				}
				*f.dst = n
				seen++
			}
		}
	}
	if err := sc.Err(); err != nil {
		return s, err
	}
	if seen < 2 {
		return s, fmt.Errorf("heap profile without HeapInuse and HeapAlloc (not a Go runtime's debug=1 profile?)")
	}
	return s, nil
}
