package fairqueuing

import (
	"math"
	"time"
)

// Demand summarises the seats a queue set's requests asked for (in use
// plus waiting) over a period: its time-weighted average and standard
// deviation and its high watermark. Borrowing between levels is computed
// from it.
type Demand struct {
	Average, StdDev, Max float64
	Seconds              float64
}

// demandIntegrator integrates a piecewise constant value over time.
type demandIntegrator struct {
	x, max               float64 // the current value; the period's maximum
	last                 time.Time
	seconds, sumX, sumXX float64
}

func (d *demandIntegrator) set(now time.Time, x float64) {
	d.advance(now)
	d.x = x
	d.max = math.Max(d.max, x)
}

func (d *demandIntegrator) advance(now time.Time) {
	if !d.last.IsZero() {
		dt := now.Sub(d.last).Seconds()
		d.seconds += dt
		d.sumX += d.x * dt
		d.sumXX += d.x * d.x * dt
	}
	d.last = now
}

// reset returns the period's summary and starts the next one.
func (d *demandIntegrator) reset(now time.Time) Demand {
	d.advance(now)
	out := Demand{Max: d.max, Seconds: d.seconds}
	if d.seconds > 0 {
		out.Average = d.sumX / d.seconds
		out.StdDev = math.Sqrt(math.Max(0, d.sumXX/d.seconds-out.Average*out.Average))
	}
	d.seconds, d.sumX, d.sumXX, d.max = 0, 0, 0, d.x
	return out
}
