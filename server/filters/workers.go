package filters

import "time"

// Workers run request handlers on goroutines kept between requests: the
// timeout filter's, and those of the other places that run a request's
// handler on a goroutine of its own (the in-process loopback transport).
// A goroutine per request starts with a small stack and grows it, copying
// it each time, on its way down the handler chain, a cost that shows in
// the CPU profile of serving lists. A worker keeps the stack it grew.
type Workers struct {
	work chan func() // unbuffered: a send succeeds only to an idle worker
	idle time.Duration
}

// workerIdleTimeout is how long a worker waits for work before it ends,
// so that a burst of requests leaves no goroutines behind.
const workerIdleTimeout = 10 * time.Second

// NewWorkers returns an empty set of workers.
func NewWorkers() *Workers { return newWorkers(workerIdleTimeout) }

func newWorkers(idle time.Duration) *Workers {
	return &Workers{work: make(chan func()), idle: idle}
}

// Run runs f on an idle worker, or on a new one if none is idle. f must
// recover its panics: a worker ends with it.
func (p *Workers) Run(f func()) {
	select {
	case p.work <- f:
	default:
		go p.worker(f)
	}
}

func (p *Workers) worker(f func()) {
	f()
	timer := time.NewTimer(p.idle)
	defer timer.Stop()
	for {
		select {
		case f := <-p.work:
			f()
			timer.Reset(p.idle)
		case <-timer.C:
			return
		}
	}
}
