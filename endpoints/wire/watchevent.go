package wire

import (
	"encoding/binary"
	"io"

	"k8s.io/apimachinery/pkg/watch"
)

// Fields of metav1.WatchEvent and of runtime.RawExtension, each tagged
// as length-delimited.
const (
	watchEventTypeTag   = 1<<3 | 2
	watchEventObjectTag = 2<<3 | 2
	rawExtensionRawTag  = 1<<3 | 2
)

// WriteStoredEvent writes the event of type typ around embedded, an
// object's protobuf envelope, as the protobuf stream serializer and its
// length-delimited framer would (the frame's length, then the
// WatchEvent's Marshal), but straight from embedded: the event is not
// marshaled into a buffer of its own first. header is scratch space for
// what precedes embedded; the grown slice is returned for the next event.
func WriteStoredEvent(w io.Writer, header, embedded []byte, typ watch.EventType) ([]byte, error) {
	raw := 1 + varintSize(len(embedded)) + len(embedded)
	size := 1 + varintSize(len(typ)) + len(typ) + 1 + varintSize(raw) + raw
	h := binary.BigEndian.AppendUint32(header[:0], uint32(size))
	h = binary.AppendUvarint(append(h, watchEventTypeTag), uint64(len(typ)))
	h = append(h, typ...)
	h = binary.AppendUvarint(append(h, watchEventObjectTag), uint64(raw))
	h = binary.AppendUvarint(append(h, rawExtensionRawTag), uint64(len(embedded)))
	if _, err := w.Write(h); err != nil {
		return h, err
	}
	_, err := w.Write(embedded)
	return h, err
}
