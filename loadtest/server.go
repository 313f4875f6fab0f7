package loadtest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Server is an API server process the tool started, to time its start.
type Server struct {
	cmd     *exec.Cmd
	log     *os.File
	started time.Time
	exited  chan struct{}
	waitErr error // set before exited is closed
}

// StartServer starts args[0] with args[1:], its output appended to
// logPath. The child gets SIGTERM if the tool dies.
func StartServer(args []string, logPath string) (*Server, error) {
	if len(args) == 0 {
		return nil, errors.New("no server command")
	}
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	s := &Server{cmd: cmd, log: log, exited: make(chan struct{})}
	s.started = time.Now()
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("starting %s: %w", args[0], err)
	}
	go func() {
		s.waitErr = cmd.Wait()
		log.Close()
		close(s.exited)
	}()
	return s, nil
}

// PID is the server's process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// WaitReady polls readyURL (anonymously, without verifying the serving
// certificate: the URL is checked to be loopback by the caller) every 20ms
// until it answers 200, and returns the time since the process started.
func (s *Server) WaitReady(ctx context.Context, readyURL string, timeout time.Duration) (time.Duration, error) {
	// The serving certificate may not exist before the server starts.
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: time.Second}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	last := "no answer"
	for {
		if code, err := get(ctx, client, readyURL); err == nil && code == http.StatusOK {
			return time.Since(s.started), nil
		} else if err != nil {
			last = err.Error()
		} else {
			last = "HTTP " + strconv.Itoa(code)
		}
		select {
		case <-s.exited:
			return 0, fmt.Errorf("server exited before it was ready: %v", s.waitErr)
		case <-ctx.Done():
			return 0, fmt.Errorf("%s not ready after %s (last: %s)", readyURL, timeout, last)
		case <-tick.C:
		}
	}
}

func get(ctx context.Context, c *http.Client, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// Stop sends SIGTERM, waits up to timeout for the process to exit, then
// kills it. It returns how long the graceful part took.
func (s *Server) Stop(timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	select {
	case <-s.exited:
		return 0, fmt.Errorf("server had already exited: %v", s.waitErr)
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return 0, err
	}
	select {
	case <-s.exited:
		return time.Since(start), nil
	case <-time.After(timeout):
		_ = s.cmd.Process.Kill()
		<-s.exited
		return time.Since(start), fmt.Errorf("server did not stop within %s after SIGTERM: killed", timeout)
	}
}

// expandRun replaces {run} in every arg with run.
func expandRun(args []string, run int) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, "{run}", strconv.Itoa(run))
	}
	return out
}
