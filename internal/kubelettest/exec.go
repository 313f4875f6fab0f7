package kubelettest

import (
	"errors"
	"io"
	"net/http"
	"os/exec"
)

// serveExec runs the query's command in the pod's directory.
func (k *Kubelet) serveExec(w http.ResponseWriter, r *http.Request) {
	command := r.URL.Query()["command"]
	if len(command) == 0 {
		httpError(w, http.StatusBadRequest, "you must specify at least one command for the container")
		return
	}
	dir, err := k.PodDir(r.PathValue("ns"), r.PathValue("pod"))
	if err != nil {
		httpError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	s, ok := upgrade(w, r)
	if !ok {
		return
	}
	go s.terminalSizes(k.recordResize)
	cmd := exec.CommandContext(k.ctx, command[0], command[1:]...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = s.output()
	if s.stdin != nil {
		in, err := cmd.StdinPipe()
		if err != nil {
			s.finish(0, err)
			return
		}
		// Not waited for: a command may end before its stdin does.
		go func() {
			_, _ = io.Copy(in, s.stdin)
			in.Close()
		}()
	}
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		s.finish(exit.ExitCode(), nil)
		return
	}
	s.finish(0, err)
}

// serveAttach attaches to a container that is a `cat`: stdin comes back
// on stdout until it ends. Without stdin, the container's log so far is
// written and the container ends.
func (k *Kubelet) serveAttach(w http.ResponseWriter, r *http.Request) {
	key := containerKey(r.PathValue("ns"), r.PathValue("pod"), r.PathValue("container"))
	s, ok := upgrade(w, r)
	if !ok {
		return
	}
	go s.terminalSizes(k.recordResize)
	stdout, _ := s.output()
	if stdout == nil {
		stdout = io.Discard
	}
	if s.stdin != nil {
		_, _ = io.Copy(stdout, s.stdin)
	} else {
		text, _, _ := k.logFrom(key, 0)
		_, _ = io.WriteString(stdout, text)
	}
	s.finish(0, nil)
}

func (k *Kubelet) recordResize(size TerminalSize) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.resizes = append(k.resizes, size)
}

// Resizes are the terminal sizes TTY sessions have sent.
func (k *Kubelet) Resizes() []TerminalSize {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]TerminalSize(nil), k.resizes...)
}
