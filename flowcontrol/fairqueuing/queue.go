package fairqueuing

// queue is a FIFO of waiting requests, linked through the requests so
// that one that times out leaves from the middle in constant time.
type queue struct {
	head, tail *Request
	length     int
	// waitingWork and waitingSeats sum the waiting requests' work and
	// width: the flow's shard picks the queue with the least work.
	waitingWork  float64
	waitingSeats int
	// nextDispatchR is the virtual time the queue's head starts at.
	nextDispatchR float64
	executing     int
	seatsInUse    int
	// executingSet holds the executing requests, for the debug dump.
	executingSet map[*Request]struct{}
}

func newQueue() *queue { return &queue{executingSet: map[*Request]struct{}{}} }

func (q *queue) idle() bool { return q.length == 0 && q.executing == 0 }

// empty: idle, and no seats of finished requests linger on it.
func (q *queue) empty() bool { return q.idle() && q.seatsInUse == 0 }

func (q *queue) push(r *Request) {
	r.prev, r.next = q.tail, nil
	if q.tail != nil {
		q.tail.next = r
	} else {
		q.head = r
	}
	q.tail = r
	q.length++
	q.waitingWork += r.work
	q.waitingSeats += r.seats
}

func (q *queue) remove(r *Request) {
	if r.prev != nil {
		r.prev.next = r.next
	} else {
		q.head = r.next
	}
	if r.next != nil {
		r.next.prev = r.prev
	} else {
		q.tail = r.prev
	}
	r.prev, r.next = nil, nil
	q.length--
	q.waitingWork -= r.work
	q.waitingSeats -= r.seats
	if q.length == 0 {
		q.waitingWork = 0 // no drift from float sums
	}
}

// boundNextDispatch keeps the head from starting before it arrived: a
// queue that was served less than its share while it had nothing to
// send does not bank the difference.
func (q *queue) boundNextDispatch() {
	if q.head != nil && q.nextDispatchR < q.head.arrivalR {
		q.nextDispatchR = q.head.arrivalR
	}
}
