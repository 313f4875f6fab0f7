package fairqueuing

import (
	"fmt"
	"math"
	"time"
)

// Descr is what the debug dump tells of a request beside its seats and
// times: the schema it matched, its flow distinguisher, and whatever
// details the caller wants to print (the user and request info).
type Descr struct {
	FlowSchema, FlowDistinguisher string
	Details                       any
}

// Dump is an instant picture of a queue set, for
// /debug/api_priority_and_fairness.
type Dump struct {
	Stats
	Idle   bool
	Queues []QueueDump
	// Queueless are the executing requests of a set without queues.
	Queueless []RequestDump
}

// QueueDump is one queue: its waiting requests in order, its executing
// ones in no particular order.
type QueueDump struct {
	Waiting, Executing []RequestDump
	SeatsInUse         int
	NextDispatchR      SeatSeconds
	// WaitingSeats and WaitingWork sum the waiting requests.
	WaitingSeats int
	WaitingWork  SeatSeconds
}

// RequestDump is one request. Started is zero while it waits.
type RequestDump struct {
	Descr
	Width
	Arrived, Started time.Time
}

// SeatSeconds is an amount of work; it prints as kube's ("1.50000000ss").
type SeatSeconds float64

func (ss SeatSeconds) String() string {
	const scale = 1e8
	n := uint64(math.Round(max(float64(ss), 0) * scale))
	return fmt.Sprintf("%d.%08dss", n/scale, n%scale)
}

// Dump returns the set's state.
func (qs *QueueSet) Dump() Dump {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	d := Dump{Stats: qs.stats, Idle: qs.stats.Waiting == 0 && qs.stats.Executing == 0}
	d.Stats.Queues, d.Stats.ActiveQueues = len(qs.queues), qs.active
	for r := range qs.queueless {
		d.Queueless = append(d.Queueless, r.dump())
	}
	d.Queues = make([]QueueDump, len(qs.queues))
	for i, q := range qs.queues {
		qd := QueueDump{SeatsInUse: q.seatsInUse, NextDispatchR: SeatSeconds(q.nextDispatchR),
			WaitingSeats: q.waitingSeats, WaitingWork: SeatSeconds(q.waitingWork)}
		for r := q.head; r != nil; r = r.next {
			qd.Waiting = append(qd.Waiting, r.dump())
		}
		for r := range q.executingSet {
			qd.Executing = append(qd.Executing, r.dump())
		}
		d.Queues[i] = qd
	}
	return d
}

func (r *Request) dump() RequestDump {
	rd := RequestDump{Descr: r.descr, Width: r.width, Arrived: r.arrived}
	if r.state == executing {
		rd.Started = r.started
	}
	return rd
}
