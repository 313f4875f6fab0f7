package testserver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
)

// readyPoll is how often /readyz is asked while the server starts: the
// start takes tens of milliseconds, so a coarser poll would dominate it.
const readyPoll = 2 * time.Millisecond

// waitReady polls /readyz until it passes, for a minute at most.
func (s *Server) waitReady() error {
	client, err := rest.HTTPClientFor(s.Config)
	if err != nil {
		return err
	}
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = wait.PollUntilContextCancel(ctx, readyPoll, true, func(ctx context.Context) (bool, error) {
		code, _, err := get(ctx, client, s.URL+"/readyz")
		return err == nil && code == http.StatusOK, nil
	})
	if err == nil {
		return nil
	}
	// Say which checks fail, so that a slow start can be told apart from
	// a hook that never finishes.
	vctx, vcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer vcancel()
	_, body, verr := get(vctx, client, s.URL+"/readyz?verbose")
	return fmt.Errorf("capstan never became ready: %w\n/readyz?verbose: %s %v", err, body, verr)
}

func get(ctx context.Context, client *http.Client, url string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}
