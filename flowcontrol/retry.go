package flowcontrol

import (
	"sync"
	"time"
)

// maxRetryAfter bounds Retry-After, kube's.
const maxRetryAfter = 32

// retryAfterTracker computes each level's Retry-After from its recent
// rejections, as kube does: it starts at 1 second, doubles (up to 32)
// when the last retryAfter seconds saw at least 3*retryAfter
// rejections, and goes down by one when they saw fewer than retryAfter.
type retryAfterTracker struct {
	now    func() time.Time
	mu     sync.Mutex // guards levels
	levels map[string]*dropStats
}

type dropStats struct {
	retryAfter int64
	updated    int64   // when retryAfter last changed (unix seconds)
	second     int64   // the current second
	count      int64   // rejections in it
	history    []drops // earlier seconds
}

type drops struct{ second, count int64 }

func (t *retryAfterTracker) dropped(level string) {
	now := t.now().Unix()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.levels == nil {
		t.levels = map[string]*dropStats{}
	}
	s := t.levels[level]
	if s == nil {
		s = &dropStats{retryAfter: 1, second: now}
		t.levels[level] = s
	}
	if s.second == now {
		s.count++
		return
	}
	s.history = append(s.history, drops{s.second, s.count})
	keep := min(2*s.retryAfter, maxRetryAfter)
	for len(s.history) > 0 && now-s.history[0].second > keep {
		s.history = s.history[1:]
	}
	s.second, s.count = now, 1
	s.update(now)
}

// update reconsiders retryAfter from the seconds before now; it doubles
// at most once per retryAfter seconds.
func (s *dropStats) update(now int64) {
	var recent int64
	for _, h := range s.history {
		if now-h.second <= s.retryAfter {
			recent += h.count
		}
	}
	switch {
	case now-s.updated >= s.retryAfter && recent >= 3*s.retryAfter:
		s.retryAfter = min(2*s.retryAfter, maxRetryAfter)
		s.updated = now
	case recent < s.retryAfter && s.retryAfter > 1:
		s.retryAfter--
	}
}

func (t *retryAfterTracker) get(level string) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.levels[level]; s != nil {
		return s.retryAfter
	}
	return 1
}
