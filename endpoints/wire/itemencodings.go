package wire

import (
	"runtime"
	"sync"
	"sync/atomic"
	"weak"
)

// ItemEncodings maps objects, weakly, to their protobuf and JSON encodings
// as list items: the watch cache's objects that lists hand over, so that a
// namespace listed again and again is encoded once per object version and
// form rather than once per list. Those objects never change (a change is
// a new object), so an encoding stays right for as long as its object
// lives, and goes when the object is collected.
type ItemEncodings struct {
	mu      sync.RWMutex       // guards entries
	entries map[itemKey][]byte // an object's encoding, by its address and form
	bytes   atomic.Int64
	// limit bounds the bytes remembered; past it, objects are encoded
	// each time, as without the cache.
	limit int64
	// maxListItems is the largest list whose new encodings are kept: a
	// list of tens of thousands of objects is not repeated quickly, and
	// its encodings would only add to the memory it costs.
	maxListItems int
}

// NewItemEncodings remembers at most limit bytes of encodings, taken from
// lists of at most maxListItems items.
func NewItemEncodings(limit int64, maxListItems int) *ItemEncodings {
	return &ItemEncodings{entries: map[itemKey][]byte{}, limit: limit, maxListItems: maxListItems}
}

// Form is a wire form an item is remembered in.
type Form uint8

const (
	Protobuf Form = iota
	JSON          // as encoding/json writes it inside a list: no newline
)

type itemKey struct {
	obj  weak.Pointer[byte]
	form Form
}

// forgotten is what a collected object's cleanup removes.
type forgotten struct {
	key  itemKey
	size int64
}

// Lookup returns the remembered encoding in form of the item whose
// identity is id (see Identities), or nil. c and id may be nil.
func (c *ItemEncodings) Lookup(id *byte, form Form) []byte {
	if c == nil || id == nil {
		return nil
	}
	key := itemKey{weak.Make(id), form}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.entries[key]
}

// encode marshals m, the item whose identity is id, and remembers the
// encoding if the limit allows.
func (c *ItemEncodings) encode(id *byte, m ProtoMarshaler) ([]byte, error) {
	data := make([]byte, m.Size())
	n, err := m.MarshalToSizedBuffer(data)
	if err != nil {
		return nil, err
	}
	if n != len(data) {
		return nil, errSizeChanged
	}
	c.remember(id, Protobuf, data)
	return data, nil
}

// remember keeps data as the encoding in form of the item whose identity
// is id, if the limit allows; data must not change afterwards.
func (c *ItemEncodings) remember(id *byte, form Form, data []byte) {
	size := int64(len(data))
	if c.bytes.Add(size) > c.limit {
		c.bytes.Add(-size)
		return
	}
	key := itemKey{weak.Make(id), form}
	c.mu.Lock()
	_, loaded := c.entries[key]
	if !loaded {
		c.entries[key] = data
	}
	c.mu.Unlock()
	if loaded {
		c.bytes.Add(-size)
		return
	}
	runtime.AddCleanup(id, c.forget, forgotten{key: key, size: size})
}

func (c *ItemEncodings) forget(f forgotten) {
	c.mu.Lock()
	delete(c.entries, f.key)
	c.mu.Unlock()
	c.bytes.Add(-f.size)
}
