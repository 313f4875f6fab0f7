package e2eutil

import (
	"net/http"
	"slices"
	"sync"
)

func Maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

// ContentTypes records the Content-Type of the answers a client gets.
type ContentTypes struct {
	mu  sync.Mutex // guards got
	got []string
}

func (c *ContentTypes) Wrap(rt http.RoundTripper) http.RoundTripper {
	return RoundTripperFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		if err == nil {
			c.mu.Lock()
			c.got = append(c.got, resp.Header.Get("Content-Type"))
			c.mu.Unlock()
		}
		return resp, err
	})
}

func (c *ContentTypes) List() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.got)
}
