package cache

import (
	"encoding/binary"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/storage"
)

// A cache configured with the resource's attribute function (Config.Attrs)
// keeps each object's labels and selectable fields next to it, computed
// once when its element is made, as kube's watch cache does: a selector
// is then evaluated without decoding the objects it does not select.
//
// They are kept in one string per element (element.attrs), a few dozen
// bytes for most objects: the values of the cache's fields
// (Cacher.fieldNames) in that order, then the labels as key and value
// pairs. Each string is its length and its bytes, or, if the element's
// key holds it (the name, the namespace, a label naming the object), its
// length and where in the key it is. The field names are the cache's,
// once; no map is kept.

// keepAttrs gives e the attributes of obj, its object. e keeps none if
// the cache keeps none, if they cannot be read (the predicate's own
// attribute function then fails on the object as well), or if its field
// names are not the resource's. Run's goroutine only: it encodes through
// c.run.attrsBuf.
func (c *Cacher) keepAttrs(e *element, obj runtime.Object) {
	if c.fieldNames == nil {
		return
	}
	ls, fs, err := c.attrs(obj)
	if err != nil || len(fs) != len(c.fieldNames) {
		return
	}
	b := c.run.attrsBuf[:0]
	for _, name := range c.fieldNames {
		v, ok := fs[name]
		if !ok {
			return
		}
		b = appendString(b, v, e.key)
	}
	for k, v := range ls {
		b = appendString(appendString(b, k, e.key), v, e.key)
	}
	c.run.attrsBuf = b
	e.attrs = string(b)
}

// fieldNamesOf returns the sorted field names attrs gives an object of
// the resource; nil, no attributes kept, if attrs is nil, gives none or
// fails on an empty object.
func fieldNamesOf(attrs storage.AttrFunc, newFunc func() runtime.Object) []string {
	if attrs == nil {
		return nil
	}
	_, fs, err := attrs(newFunc())
	if err != nil {
		return nil
	}
	return slices.Sorted(maps.Keys(fs))
}

// appendString appends s to an encoding of attributes of the element at
// key: uvarint(len(s)<<1 | 1) and uvarint(where s is in key) if key holds
// s and that is shorter, else uvarint(len(s)<<1) and s.
func appendString(b []byte, s, key string) []byte {
	if len(s) > 2 {
		if at := strings.Index(key, s); at >= 0 {
			b = binary.AppendUvarint(b, uint64(len(s))<<1|1)
			return binary.AppendUvarint(b, uint64(at))
		}
	}
	return append(binary.AppendUvarint(b, uint64(len(s))<<1), s...)
}

// cutString splits the string appendString put first in enc off the rest.
func cutString(enc, key string) (s, rest string) {
	h, n := uvarint(enc)
	size := int(h >> 1)
	if h&1 == 0 {
		return enc[n : n+size], enc[n+size:]
	}
	at, m := uvarint(enc[n:])
	return key[at : int(at)+size], enc[n+m:]
}

// uvarint decodes the uvarint that starts enc, and its size.
func uvarint(enc string) (v uint64, n int) {
	for shift := 0; n < len(enc); shift += 7 {
		b := enc[n]
		n++
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			break
		}
	}
	return v, n
}

// selector evaluates a predicate on elements, for one reader at a time (a
// list, a watcher): on their kept attributes when the predicate's
// attributes are the resource's (storage.SelectionPredicate.ResourceAttrs),
// else on their objects.
type selector struct {
	c    *Cacher
	pred storage.SelectionPredicate
	kept bool // pred may be evaluated on kept attributes
	// The attributes of the element being evaluated:
	labels keptLabels
	fields keptFields
}

func (c *Cacher) selector(pred storage.SelectionPredicate) *selector {
	return &selector{
		c: c, pred: pred, kept: pred.ResourceAttrs && c.fieldNames != nil,
		fields: keptFields{names: c.fieldNames},
	}
}

// byAttrs reports whether the predicate selects e by e's kept attributes;
// known is false when those cannot tell (none kept, or not the ones the
// predicate reads), and the caller reads e's object.
func (s *selector) byAttrs(e *element) (selected, known bool) {
	switch {
	case s.pred.Empty():
		return true, true
	case !s.kept || e.attrs == "":
		return false, false
	}
	s.fields.enc, s.fields.key = e.attrs, e.key
	s.labels.enc, s.labels.key = e.attrs, e.key
	for range s.fields.names {
		_, s.labels.enc = cutString(s.labels.enc, e.key)
	}
	return s.pred.MatchesAttrs(&s.labels, &s.fields), true
}

// selects reports whether the predicate selects e; an object that cannot
// be read is not selected.
func (s *selector) selects(e *element) bool {
	if ok, known := s.byAttrs(e); known {
		return ok
	}
	obj, err := s.c.object(e)
	return err == nil && matches(s.pred, obj)
}

// keptLabels is the labels part of an element's kept attributes, as a
// labels.Labels.
type keptLabels struct{ enc, key string }

func (l *keptLabels) Has(key string) bool {
	_, ok := l.Lookup(key)
	return ok
}

func (l *keptLabels) Get(key string) string {
	v, _ := l.Lookup(key)
	return v
}

func (l *keptLabels) Lookup(key string) (string, bool) {
	for rest := l.enc; rest != ""; {
		var k, v string
		k, rest = cutString(rest, l.key)
		v, rest = cutString(rest, l.key)
		if k == key {
			return v, true
		}
	}
	return "", false
}

// keptFields is an element's kept attributes as a fields.Fields.
type keptFields struct {
	names []string // the cache's field names
	enc   string   // the attributes: the fields' values first, in order
	key   string   // the element's
}

func (f *keptFields) Has(name string) bool { return slices.Contains(f.names, name) }

func (f *keptFields) Get(name string) string {
	i := slices.Index(f.names, name)
	if i < 0 {
		return ""
	}
	v, rest := cutString(f.enc, f.key)
	for ; i > 0; i-- {
		v, rest = cutString(rest, f.key)
	}
	return v
}
