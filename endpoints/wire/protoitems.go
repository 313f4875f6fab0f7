package wire

import (
	"encoding/binary"
	"errors"
	"io"

	"k8s.io/apimachinery/pkg/runtime"
)

var (
	errNotProtobuf            = errors.New("list item is not a protobuf message")
	errSizeChanged            = errors.New("list item changed size while encoded")
	_              ProtoItems = StoredMessages{}
	_              ProtoItems = (*Objects)(nil)
	_              ProtoItems = (*CachedObjects)(nil)
)

// StoredMessages are items whose protobuf messages storage kept, as the
// list writes them (storage.ListItems.Protobuf). Each is asked for again
// as it is written: the list keeps no size nor encoding per item.
type StoredMessages struct {
	N       int
	Message func(i int) ([]byte, error)
}

func (s StoredMessages) Len() int { return s.N }

func (s StoredMessages) Size(i int) (int, error) {
	m, err := s.Message(i)
	return len(m), err
}

func (s StoredMessages) Write(w io.Writer, header []byte, i int) (int, error) {
	m, err := s.Message(i)
	if err != nil {
		return 0, err
	}
	return writeItem(w, header, m)
}

// Objects are items marshaled as they are written, through one buffer the
// size of the largest; only their sizes are kept from sizing to writing.
type Objects struct {
	items Items
	sizes []int
	buf   []byte
}

// NewObjects returns the items as Objects.
func NewObjects(items Items) *Objects {
	return &Objects{items: items, sizes: make([]int, items.Len())}
}

func (o *Objects) Len() int { return len(o.sizes) }

func (o *Objects) Size(i int) (int, error) {
	m, err := protoItem(o.items, i)
	if err != nil {
		return 0, err
	}
	o.sizes[i] = m.Size()
	return o.sizes[i], nil
}

func (o *Objects) Write(w io.Writer, _ []byte, i int) (int, error) {
	m, err := protoItem(o.items, i)
	if err != nil {
		return 0, err
	}
	size := o.sizes[i]
	n := 1 + varintSize(size) + size
	if cap(o.buf) < n {
		o.buf = make([]byte, n)
	}
	buf := o.buf[:n]
	buf[0] = protoItemsTag
	k := 1 + binary.PutUvarint(buf[1:], uint64(size))
	if got, err := m.MarshalToSizedBuffer(buf[k:]); err != nil {
		return 0, err
	} else if got != size {
		return 0, errSizeChanged
	}
	return w.Write(buf)
}

// CachedObjects are the watch cache's objects, which never change:
// their encodings are looked up in, or added to, the server's
// ItemEncodings by their identities while the list is sized, and written
// from there.
type CachedObjects struct {
	items   Items
	ids     Identities
	cache   *ItemEncodings
	encoded [][]byte
}

func (c *CachedObjects) Len() int { return len(c.encoded) }

func (c *CachedObjects) Size(i int) (int, error) {
	id := c.ids(i)
	if c.encoded[i] = c.cache.Lookup(id, Protobuf); c.encoded[i] == nil {
		m, err := protoItem(c.items, i)
		if err != nil {
			return 0, err
		}
		if c.encoded[i], err = c.cache.encode(id, m); err != nil {
			return 0, err
		}
	}
	return len(c.encoded[i]), nil
}

func (c *CachedObjects) Write(w io.Writer, header []byte, i int) (int, error) {
	return writeItem(w, header, c.encoded[i])
}

func protoItem(items Items, i int) (ProtoMarshaler, error) {
	item, err := items.At(i)
	if err != nil {
		return nil, err
	}
	m, ok := item.(ProtoMarshaler)
	if !ok {
		return nil, errNotProtobuf
	}
	return m, nil
}

// IsProtobuf reports whether obj marshals itself as protobuf.
func IsProtobuf(obj runtime.Object) bool {
	_, ok := obj.(ProtoMarshaler)
	return ok
}
