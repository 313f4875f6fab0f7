package kubelettest

import (
	"net/http"
	"strconv"
	"strings"
)

// containerLog is a container's log and the followers waiting for more.
type containerLog struct {
	text    string
	changed chan struct{} // closed and replaced on each append
}

// AppendLog adds text to a container's log; followers receive it.
func (k *Kubelet) AppendLog(ns, pod, container, text string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	key := containerKey(ns, pod, container)
	l := k.logs[key]
	if l == nil {
		l = &containerLog{changed: make(chan struct{})}
		k.logs[key] = l
	}
	l.text += text
	close(l.changed)
	l.changed = make(chan struct{})
}

// logFrom is the log after offset bytes and a channel closed when it
// grows; ok is false for a container without a log.
func (k *Kubelet) logFrom(key string, offset int) (text string, changed <-chan struct{}, ok bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	l := k.logs[key]
	if l == nil {
		return "", nil, false
	}
	return l.text[min(offset, len(l.text)):], l.changed, true
}

// serveLogs answers as the kubelet does, for tailLines, limitBytes and
// follow; the other options are only recorded (Requests).
func (k *Kubelet) serveLogs(w http.ResponseWriter, r *http.Request) {
	key := containerKey(r.PathValue("ns"), r.PathValue("pod"), r.PathValue("container"))
	text, changed, ok := k.logFrom(key, 0)
	if !ok {
		httpError(w, http.StatusNotFound, "container %q in pod %q is not found", r.PathValue("container"), r.PathValue("pod"))
		return
	}
	q := r.URL.Query()
	sent := len(text)
	if n, err := strconv.Atoi(q.Get("tailLines")); err == nil {
		lines := strings.SplitAfter(text, "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		text = strings.Join(lines[max(0, len(lines)-n):], "")
	}
	if n, err := strconv.Atoi(q.Get("limitBytes")); err == nil && n < len(text) {
		text = text[:n]
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte(text))
	if q.Get("follow") != "true" {
		return
	}
	rc := http.NewResponseController(w)
	for {
		_ = rc.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-k.ctx.Done():
			return
		case <-changed:
		}
		var more string
		more, changed, _ = k.logFrom(key, sent)
		sent += len(more)
		if _, err := w.Write([]byte(more)); err != nil {
			return
		}
	}
}
