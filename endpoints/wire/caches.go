package wire

import (
	"io"
	"log/slog"
	"sync"
)

// Caches are what a server's encoders keep from one response to the
// next: the encodings of the watch cache's objects, and which fallbacks
// were reported. The generic server makes one per completed config, which
// every server of a chain is built from.
type Caches struct {
	items  *ItemEncodings
	logger *slog.Logger
	// reported holds the fallbacks logged already, by reason and kind.
	reported sync.Map
}

// NewCaches remembers up to 32 MiB of item encodings, from lists of at
// most 1,000 items: a list of tens of thousands of objects is not
// repeated quickly, and its encodings would only add to its memory.
func NewCaches(logger *slog.Logger) *Caches {
	return &Caches{items: NewItemEncodings(32<<20, 1000), logger: logger}
}

// NewCachesWith is NewCaches with the item encodings given (tests).
func NewCachesWith(items *ItemEncodings, logger *slog.Logger) *Caches {
	return &Caches{items: items, logger: logger}
}

// Identities give each item of a list what its remembered encodings are
// kept by (storage.ListItems.Identity); nil when the items are not the
// watch cache's, whose encodings are not remembered.
type Identities func(i int) *byte

// ProtoItems picks the source of a protobuf list's items: the messages
// storage kept when stored is not nil, the remembered encodings of the
// watch cache's objects for a list small enough, or else the objects
// marshaled as they are written. c may be nil: nothing is remembered then.
func (c *Caches) ProtoItems(items Items, ids Identities, stored func(i int) ([]byte, error)) ProtoItems {
	n := items.Len()
	switch {
	case stored != nil:
		return StoredMessages{N: n, Message: stored}
	case c.remembers(n, ids):
		return &CachedObjects{items: items, ids: ids, cache: c.items, encoded: make([][]byte, n)}
	}
	return NewObjects(items)
}

// WriteJSONList writes a JSON list (see writeJSONList), with the
// remembered encodings of the watch cache's objects for a list small
// enough. typed says the items are of built-in kinds. c may be nil.
func (c *Caches) WriteJSONList(w io.Writer, head []byte, items Items, typed bool, ids Identities) error {
	if !c.remembers(items.Len(), ids) {
		ids = nil
	}
	var remembered *ItemEncodings
	if c != nil {
		remembered = c.items
	}
	return writeJSONList(w, head, items, typed, remembered, ids)
}

// remembers reports whether the encodings of a list of n items with ids
// are remembered.
func (c *Caches) remembers(n int, ids Identities) bool {
	return c != nil && ids != nil && n <= c.items.maxListItems
}

// Fallback reports, once per reason and kind, that a response is written
// by the codec as a whole instead of item by item, and why: the answer is
// the same, its cost is not.
func (c *Caches) Fallback(reason, kind string, err error) {
	if c == nil {
		return
	}
	if _, seen := c.reported.LoadOrStore(reason+"\x00"+kind, true); seen {
		return
	}
	c.logger.Warn("writing responses whole, not item by item", "reason", reason, "kind", kind, "err", err)
}
