package fairqueuing

import (
	"testing"
	"time"
)

func TestSeatSecondsString(t *testing.T) {
	for _, tc := range []struct {
		ss   SeatSeconds
		want string
	}{
		{0, "0.00000000ss"},
		{0.003, "0.00300000ss"},
		{1.5, "1.50000000ss"},
		{12.000000004, "12.00000000ss"},
		{-1, "0.00000000ss"},
	} {
		if got := tc.ss.String(); got != tc.want {
			t.Errorf("%v: %q, want %q", float64(tc.ss), got, tc.want)
		}
	}
}

// TestDump: waiting requests in queue order with their descriptions and
// no start time; executing ones by queue; the counters.
func TestDump(t *testing.T) {
	clock := newClock()
	qs := newSet(t, clock, Config{Queues: 2, HandSize: 1, QueueLengthLimit: 5, ConcurrencyLimit: 2})
	run := qs.StartDescribed(Width{InitialSeats: 2}, flowHash(0), Descr{FlowSchema: "fs", FlowDistinguisher: "a"})
	clock.step(time.Second)
	w1 := qs.StartDescribed(Width{InitialSeats: 1}, flowHash(1), Descr{FlowSchema: "fs", FlowDistinguisher: "b"})
	w2 := qs.StartDescribed(Width{InitialSeats: 3}, flowHash(1), Descr{FlowSchema: "fs", FlowDistinguisher: "c"})
	d := qs.Dump()
	if d.Waiting != 2 || d.Executing != 1 || d.Dispatched != 1 || d.Idle || len(d.Queues) != 2 {
		t.Fatalf("dump %+v", d)
	}
	if q := d.Queues[0]; len(q.Executing) != 1 || len(q.Waiting) != 0 || q.SeatsInUse != 2 ||
		q.Executing[0].FlowDistinguisher != "a" || q.Executing[0].Started.IsZero() {
		t.Errorf("queue 0: %+v", q)
	}
	q := d.Queues[1]
	if len(q.Waiting) != 2 || q.Waiting[0].FlowDistinguisher != "b" || q.Waiting[1].FlowDistinguisher != "c" ||
		!q.Waiting[0].Started.IsZero() || q.Waiting[1].InitialSeats != 3 || q.WaitingSeats != 4 ||
		!q.Waiting[0].Arrived.Equal(clock.now) {
		t.Errorf("queue 1: %+v", q)
	}
	run.Finish()
	w1.Finish()
	w2.Finish()
	if d := qs.Dump(); !d.Idle {
		t.Errorf("not idle after all finished: %+v", d)
	}
	exempt := newSet(t, clock, Config{Exempt: true})
	r := exempt.StartDescribed(Width{InitialSeats: 1}, 0, Descr{FlowSchema: "exempt"})
	if d := exempt.Dump(); len(d.Queueless) != 1 || d.Queueless[0].FlowSchema != "exempt" {
		t.Errorf("exempt dump %+v", d)
	}
	r.Finish()
	if d := exempt.Dump(); len(d.Queueless) != 0 {
		t.Errorf("exempt dump after finish %+v", d)
	}
}
