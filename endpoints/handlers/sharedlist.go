package handlers

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/capstan-io/capstan/audit"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/storage"
)

// listForResponse lists through the storage's ListForResponse when it has
// one: the items may then come apart from the list, as the watch cache's
// own objects.
func (s *Scope) listForResponse(ctx context.Context, lister rest.Lister, opts *rest.ListOptions) (runtime.Object, storage.ListItems, error) {
	if rl, ok := s.Storage.(rest.ResponseLister); ok {
		return rl.ListForResponse(ctx, opts)
	}
	list, err := lister.List(ctx, opts)
	return list, nil, err
}

// writeList writes list, whose items are items when those are not nil.
// JSON and protobuf answers, of the objects or of their metadata, are
// written from items one by one, so that a list of N objects never holds
// N copies of them; other forms (a Table, YAML, indented JSON, an audited
// response) get the items put into the list.
func (s *Scope) writeList(w http.ResponseWriter, r *http.Request, list runtime.Object, items storage.ListItems) {
	if items == nil {
		s.writeObject(w, r, http.StatusOK, list)
		return
	}
	out, err := negotiateOutput(r, s.Serializer, s.shapesFor(list))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if encode := s.sharedListEncoder(r, out, list, items); encode != nil {
		writeEncoded(w, r, s.Serializer, http.StatusOK, out.info.MediaType, encode)
		return
	}
	all := make([]runtime.Object, items.Len())
	for i := range all {
		if all[i], err = items.At(i); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	if err := meta.SetList(list, all); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeObject(w, r, http.StatusOK, list)
}

// itemSource yields the items of a list being written, one at a time.
type itemSource struct {
	n  int
	at func(i int) (runtime.Object, error)
	// cached says the items are the watch cache's own objects, which
	// never change: their encodings may be remembered (protoItems).
	cached bool
	// raw, if set, returns each item's protobuf message as the list
	// writes it (storage.ListItems.Protobuf): at is then not called.
	raw func(i int) ([]byte, error)
}

// metadataOfItems yields the metadata of each of items, as partialMetadata
// does, in one PartialObjectMetadata reused for every item: each is
// encoded before the next is asked for.
func metadataOfItems(items storage.ListItems, version string) func(int) (runtime.Object, error) {
	pom := &metav1.PartialObjectMetadata{}
	pom.APIVersion, pom.Kind = metav1.GroupName+"/"+version, "PartialObjectMetadata"
	return func(i int) (runtime.Object, error) {
		item, err := items.At(i)
		if err != nil {
			return nil, err
		}
		if a, ok := item.(metav1.ObjectMetaAccessor); ok {
			if om, ok := a.GetObjectMeta().(*metav1.ObjectMeta); ok {
				pom.ObjectMeta = *om
				return pom, nil
			}
		}
		m, err := meta.Accessor(item)
		if err != nil {
			return nil, err
		}
		pom.ObjectMeta = meta.AsPartialObjectMetadata(m).ObjectMeta
		return pom, nil
	}
}

// sharedListEncoder returns what writes list with items (or their
// metadata, as out asks) as the codec would write the list holding them,
// byte for byte, or nil if the answer needs the whole list. The list's own
// part (kind, apiVersion, metadata) is the codec's encoding of the list
// without items.
func (s *Scope) sharedListEncoder(r *http.Request, out output, list runtime.Object, items storage.ListItems) func(io.Writer) error {
	if wantsPretty(r) || audit.From(r.Context()).Level() == auditv1.LevelRequestResponse {
		return nil
	}
	src := itemSource{n: items.Len(), at: items.At, cached: items.Kept()}
	switch out.as {
	case asObject:
		if err := meta.SetList(list, nil); err != nil {
			return nil
		}
	case asMetadataList:
		pomList := emptyPartialMetadataList(list, out.version)
		if items.Len() > 0 {
			// [] in the head, for the items to go in; with none, the
			// whole list's null is written.
			pomList.Items = []metav1.PartialObjectMetadata{}
		}
		list, src.at, src.cached = pomList, metadataOfItems(items, out.version), false
	default:
		return nil
	}
	gv := s.targetVersion(list)
	if !s.encodedAsIs(list, gv) {
		return nil
	}
	var head bytes.Buffer
	if err := s.Serializer.EncoderForVersion(out.info.Serializer, gv).Encode(list, &head); err != nil {
		return nil
	}
	switch out.info.MediaType {
	case runtime.ContentTypeJSON:
		if !bytes.HasSuffix(head.Bytes(), jsonListEnd) {
			return nil
		}
		return func(w io.Writer) error { return writeJSONList(w, head.Bytes(), src) }
	case runtime.ContentTypeProtobuf:
		var unk runtime.Unknown
		if !bytes.HasPrefix(head.Bytes(), protobufPrefix) || unk.Unmarshal(head.Bytes()[len(protobufPrefix):]) != nil {
			return nil
		}
		if out.as == asObject {
			src.raw = items.Protobuf(gv)
		}
		if src.n > 0 && src.raw == nil {
			if first, err := src.at(0); err != nil {
				return nil
			} else if _, ok := first.(protoMarshaler); !ok {
				return nil
			}
		}
		return func(w io.Writer) error { return writeProtobufList(w, unk, src) }
	}
	return nil
}

// encodedAsIs reports whether the codec encodes list without converting
// it (and so its items): its type is gv's.
func (s *Scope) encodedAsIs(list runtime.Object, gv schema.GroupVersion) bool {
	if s.Typer == nil {
		return false
	}
	gvks, _, err := s.Typer.ObjectKinds(list)
	return err == nil && slices.ContainsFunc(gvks, func(gvk schema.GroupVersionKind) bool { return gvk.GroupVersion() == gv })
}

// jsonListEnd ends the JSON of a list with no items.
var jsonListEnd = []byte(`"items":[]}` + "\n")

// writeJSONList writes head, the JSON of the list without items, with
// the items in it. Each is encoded as encoding/json encodes it inside the
// list, as apimachinery's streaming encoder writes them.
func writeJSONList(w io.Writer, head []byte, src itemSource) error {
	if _, err := w.Write(head[:len(head)-len("]}\n")]); err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i := range src.n {
		item, err := src.at(i)
		if err != nil {
			return err
		}
		buf.Reset()
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := enc.Encode(item); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
		if _, err := w.Write(buf.Bytes()); err != nil {
			return err
		}
	}
	_, err := w.Write([]byte("]}\n"))
	return err
}

// protoMarshaler is what generated protobuf types implement.
type protoMarshaler interface {
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
}

// protobufPrefix starts kube's protobuf encoding of an object.
var protobufPrefix = []byte("k8s\x00")

// protoItemsTag is the tag of a list's items: field 2, length-delimited.
const protoItemsTag = 2<<3 | 2

// writeProtobufList writes unk, the protobuf of the list without items
// (after the prefix, a runtime.Unknown whose Raw is the list's metadata),
// with the items in it: Raw is then that metadata followed by each item.
// Raw's length comes first, so the items are sized before any is written.
func writeProtobufList(w io.Writer, unk runtime.Unknown, src itemSource) error {
	listMeta := unk.Raw
	unk.Raw = nil
	// Stored messages (raw) are asked for again as they are written: no
	// sizes nor encodings per item (32 B an item, 10 MB for 10 lists of
	// 30,000 at once).
	var sizes []int
	if src.raw == nil {
		sizes = make([]int, src.n)
	}
	// The encodings protoItems remembers, for a list of the cache's
	// objects small enough to use them; nil for the others.
	var encoded [][]byte
	if src.raw == nil && src.cached && src.n <= protoItems.maxListItems {
		encoded = make([][]byte, src.n)
	}
	total := len(listMeta)
	for i := range src.n {
		if src.raw != nil {
			raw, err := src.raw(i)
			if err != nil {
				return err
			}
			total += 1 + varintSize(len(raw)) + len(raw)
			continue
		}
		m, err := protoItem(src, i)
		if err != nil {
			return err
		}
		if encoded == nil {
			sizes[i] = m.Size()
		} else {
			item := m.(runtime.Object)
			if encoded[i] = protoItems.lookup(item); encoded[i] == nil {
				if encoded[i], err = protoItems.encode(item, m); err != nil {
					return err
				}
			}
			sizes[i] = len(encoded[i])
		}
		total += 1 + varintSize(sizes[i]) + sizes[i]
	}
	if _, err := w.Write(protobufPrefix); err != nil {
		return err
	}
	_, err := unk.MarshalToWriter(w, total, func(w io.Writer) (int, error) {
		return writeProtobufItems(w, listMeta, src, sizes, encoded)
	})
	return err
}

func protoItem(src itemSource, i int) (protoMarshaler, error) {
	item, err := src.at(i)
	if err != nil {
		return nil, err
	}
	m, ok := item.(protoMarshaler)
	if !ok {
		return nil, errors.New("list item is not a protobuf message")
	}
	return m, nil
}

// writeProtobufItems writes listMeta, then each item with its tag and
// length: its stored message (src.raw) or its encoding when encoded has
// it, else through one buffer the size of the largest.
func writeProtobufItems(w io.Writer, listMeta []byte, src itemSource, sizes []int, encoded [][]byte) (int, error) {
	written, err := w.Write(listMeta)
	if err != nil {
		return written, err
	}
	var buf []byte
	header := make([]byte, 1+binary.MaxVarintLen64) // escapes through w: once per list, not per item
	for i := range src.n {
		if src.raw != nil || encoded != nil {
			var data []byte
			if src.raw == nil {
				data = encoded[i]
			} else if data, err = src.raw(i); err != nil {
				return written, err
			}
			n, err := writeProtobufItem(w, header, data)
			written += n
			if err != nil {
				return written, err
			}
			continue
		}
		item, err := protoItem(src, i)
		if err != nil {
			return written, err
		}
		n := 1 + varintSize(sizes[i]) + sizes[i]
		if cap(buf) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		buf[0] = protoItemsTag
		k := 1 + binary.PutUvarint(buf[1:], uint64(sizes[i]))
		m, err := item.MarshalToSizedBuffer(buf[k:])
		if err != nil {
			return written, err
		}
		if m != sizes[i] {
			return written, errors.New("list item changed size while encoded")
		}
		wn, err := w.Write(buf)
		written += wn
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// writeProtobufItem writes one item's tag, length and encoding, the first
// two through header.
func writeProtobufItem(w io.Writer, header, data []byte) (int, error) {
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
