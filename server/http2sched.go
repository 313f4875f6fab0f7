package server

import "golang.org/x/net/http2"

// recordDataSize is the most a DATA frame carries so that the frame, with
// its 9-byte header, is one full TLS record (16 KiB of plaintext). A
// frame of 16 KiB of data, the most most clients take, is written with
// one Write of 16 KiB + 9 bytes, which TLS sends as two records: a full
// one and one of 9 bytes, each sealed and written on its own: a large
// response took nearly twice the records it needs.
const recordDataSize = 16<<10 - 9

// recordSizedScheduler writes DATA frames of at most recordDataSize
// bytes, stream by stream, after what the random scheduler (which keeps
// every other frame, control frames and resets first) has to write.
type recordSizedScheduler struct {
	others http2.WriteScheduler
	// data holds each stream's DATA frames that carry data, in order.
	// Every other frame goes to others: a handler has one write under
	// way at a time (it waits for it to be written), so the frames that
	// must follow a stream's data (an empty END_STREAM frame, trailers)
	// are pushed only once its data is out; and resets, as before, need
	// not wait for flow control to let data through.
	data map[uint32][]http2.FrameWriteRequest
}

func newRecordSizedScheduler() http2.WriteScheduler {
	return &recordSizedScheduler{others: http2.NewRandomWriteScheduler(), data: map[uint32][]http2.FrameWriteRequest{}}
}

func (s *recordSizedScheduler) OpenStream(id uint32, opts http2.OpenStreamOptions) {
	s.others.OpenStream(id, opts)
}

func (s *recordSizedScheduler) CloseStream(id uint32) {
	s.others.CloseStream(id)
	delete(s.data, id)
}

func (s *recordSizedScheduler) AdjustStream(id uint32, priority http2.PriorityParam) {
	s.others.AdjustStream(id, priority)
}

func (s *recordSizedScheduler) Push(wr http2.FrameWriteRequest) {
	if wr.DataSize() == 0 {
		s.others.Push(wr)
		return
	}
	id := wr.StreamID()
	s.data[id] = append(s.data[id], wr)
}

func (s *recordSizedScheduler) Pop() (http2.FrameWriteRequest, bool) {
	if wr, ok := s.others.Pop(); ok {
		return wr, true
	}
	for id, q := range s.data {
		// Flow control may hold the stream's first frame back (0).
		wr, rest, n := q[0].Consume(recordDataSize)
		switch n {
		case 0:
			continue
		case 1:
			q[0] = http2.FrameWriteRequest{}
			if q = q[1:]; len(q) == 0 {
				delete(s.data, id)
			} else {
				s.data[id] = q
			}
		case 2:
			q[0] = rest
		}
		return wr, true
	}
	return http2.FrameWriteRequest{}, false
}
