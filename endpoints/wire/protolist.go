package wire

import (
	"encoding/binary"
	"io"

	"k8s.io/apimachinery/pkg/runtime"
)

// ProtoMarshaler is what generated protobuf types implement.
type ProtoMarshaler interface {
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
}

// ProtobufPrefix starts kube's protobuf encoding of an object.
var ProtobufPrefix = []byte("k8s\x00")

// protoItemsTag is the tag of a list's items: field 2, length-delimited.
const protoItemsTag = 2<<3 | 2

// ProtoItems are a protobuf list's items from one source. The list's
// length comes before its items, so every item is sized (in order) before
// the first is written.
type ProtoItems interface {
	Len() int
	// Size returns item i's encoded size.
	Size(i int) (int, error)
	// Write writes item i's tag, length and encoding; header is scratch
	// space for the first two.
	Write(w io.Writer, header []byte, i int) (int, error)
}

// WriteProtobufList writes unk, the protobuf of the list without items
// (after ProtobufPrefix, a runtime.Unknown whose Raw is the list's
// metadata), with the items in it: Raw is then that metadata followed by
// each item.
func WriteProtobufList(w io.Writer, unk runtime.Unknown, items ProtoItems) error {
	listMeta := unk.Raw
	unk.Raw = nil
	total := len(listMeta)
	for i := range items.Len() {
		n, err := items.Size(i)
		if err != nil {
			return err
		}
		total += 1 + varintSize(n) + n
	}
	if _, err := w.Write(ProtobufPrefix); err != nil {
		return err
	}
	_, err := unk.MarshalToWriter(w, total, func(w io.Writer) (int, error) {
		written, err := w.Write(listMeta)
		if err != nil {
			return written, err
		}
		header := make([]byte, 1+binary.MaxVarintLen64) // escapes through w: once per list, not per item
		for i := range items.Len() {
			n, err := items.Write(w, header, i)
			written += n
			if err != nil {
				return written, err
			}
		}
		return written, nil
	})
	return err
}

// writeItem writes one item's tag, length and encoding, the first two
// through header.
func writeItem(w io.Writer, header, data []byte) (int, error) {
	header[0] = protoItemsTag
	k := 1 + binary.PutUvarint(header[1:], uint64(len(data)))
	n, err := w.Write(header[:k])
	if err != nil {
		return n, err
	}
	m, err := w.Write(data)
	return n + m, err
}

// varintSize is how many bytes the varint of n takes.
func varintSize(n int) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], uint64(n))
}
