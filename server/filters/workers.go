package filters

import "time"

// handlerWorkers run the handlers of requests that have a timeout, on
// goroutines kept between requests. A goroutine per request starts with a
// small stack and grows it, copying it each time, on its way down the
// handler chain: 3% of the CPU of serving lists. A worker keeps the stack
// it grew.
type handlerWorkers struct {
	work chan func() // unbuffered: a send succeeds only to an idle worker
	idle time.Duration
}

// workerIdleTimeout is how long a worker waits for work before it ends,
// so that a burst of requests leaves no goroutines behind.
const workerIdleTimeout = 10 * time.Second

func newHandlerWorkers(idle time.Duration) *handlerWorkers {
	return &handlerWorkers{work: make(chan func()), idle: idle}
}

// run runs f on an idle worker, or on a new one if none is idle. f must
// not panic: a worker ends with it.
func (p *handlerWorkers) run(f func()) {
	select {
	case p.work <- f:
	default:
		go p.worker(f)
	}
}

func (p *handlerWorkers) worker(f func()) {
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

// Workers are handler goroutines kept between requests, for the other
// places that run a request's handler on a goroutine of its own (the
// in-process loopback transport). The functions they run must recover
// their panics.
type Workers struct{ w *handlerWorkers }

// NewWorkers returns an empty set of workers.
func NewWorkers() Workers { return Workers{newHandlerWorkers(workerIdleTimeout)} }

// Run runs f on an idle worker, or on a new one.
func (w Workers) Run(f func()) { w.w.run(f) }
