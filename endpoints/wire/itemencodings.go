package wire

import (
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"weak"

	kruntime "k8s.io/apimachinery/pkg/runtime"
)

// ItemEncodings maps objects, weakly, to their protobuf encodings: the
// watch cache's objects that lists hand over, so that a namespace listed
// again and again is encoded once per object version rather than once per
// list. Those objects never change (a change is a new object), so an
// encoding stays right for as long as its object lives, and goes when the
// object is collected.
type ItemEncodings struct {
	mu      sync.RWMutex                  // guards entries
	entries map[weak.Pointer[byte]][]byte // an object's encoding, by its address
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
	return &ItemEncodings{entries: map[weak.Pointer[byte]][]byte{}, limit: limit, maxListItems: maxListItems}
}

// forgotten is what a collected object's cleanup removes.
type forgotten struct {
	key  weak.Pointer[byte]
	size int64
}

// Lookup returns the remembered encoding of obj (a pointer, the cache's
// own), or nil.
func (c *ItemEncodings) Lookup(obj kruntime.Object) []byte {
	key := weak.Make(objectStart(obj))
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.entries[key]
}

// encode marshals m, which is obj, and remembers the encoding if the limit
// allows.
func (c *ItemEncodings) encode(obj kruntime.Object, m ProtoMarshaler) ([]byte, error) {
	data := make([]byte, m.Size())
	n, err := m.MarshalToSizedBuffer(data)
	if err != nil {
		return nil, err
	}
	if n != len(data) {
		return nil, errSizeChanged
	}
	size := int64(len(data))
	if c.bytes.Add(size) > c.limit {
		c.bytes.Add(-size)
		return data, nil
	}
	start := objectStart(obj)
	key := weak.Make(start)
	c.mu.Lock()
	_, loaded := c.entries[key]
	if !loaded {
		c.entries[key] = data
	}
	c.mu.Unlock()
	if loaded {
		c.bytes.Add(-size)
		return data, nil
	}
	runtime.AddCleanup(start, c.forget, forgotten{key: key, size: size})
	return data, nil
}

func (c *ItemEncodings) forget(f forgotten) {
	c.mu.Lock()
	delete(c.entries, f.key)
	c.mu.Unlock()
	c.bytes.Add(-f.size)
}

// objectStart is the address of the object obj points to.
func objectStart(obj kruntime.Object) *byte {
	return (*byte)(reflect.ValueOf(obj).UnsafePointer())
}
