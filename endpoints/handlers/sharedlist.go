package handlers

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/capstan-io/capstan/audit"
	"github.com/capstan-io/capstan/endpoints/wire"
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
	out, err := negotiateOutput(r, s.Serializer, s.answerShapes())
	if err == nil {
		err = s.checkMetadataShape(list, out)
	}
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
	s.writeObject(w, r, http.StatusOK, list) // its items lose their kinds there
}

// metadataItems yields the metadata of each of items, as partialMetadata
// does, in one PartialObjectMetadata reused for every item: each is
// encoded before the next is asked for.
type metadataItems struct {
	items storage.ListItems
	pom   *metav1.PartialObjectMetadata
}

func metadataOfItems(items storage.ListItems, version string) metadataItems {
	pom := &metav1.PartialObjectMetadata{}
	pom.APIVersion, pom.Kind = metav1.GroupName+"/"+version, "PartialObjectMetadata"
	return metadataItems{items: items, pom: pom}
}

func (m metadataItems) Len() int { return m.items.Len() }

func (m metadataItems) At(i int) (runtime.Object, error) {
	item, err := m.items.At(i)
	if err != nil {
		return nil, err
	}
	if a, ok := item.(metav1.ObjectMetaAccessor); ok {
		if om, ok := a.GetObjectMeta().(*metav1.ObjectMeta); ok {
			m.pom.ObjectMeta = *om
			return m.pom, nil
		}
	}
	acc, err := meta.Accessor(item)
	if err != nil {
		return nil, err
	}
	m.pom.ObjectMeta = meta.AsPartialObjectMetadata(acc).ObjectMeta
	return m.pom, nil
}

// sharedListEncoder returns what writes list with items (or their
// metadata, as out asks) as the codec would write the list holding them,
// byte for byte, or nil if the answer needs the whole list. The list's own
// part (kind, apiVersion, metadata) is the codec's encoding of the list
// without items.
func (s *Scope) sharedListEncoder(r *http.Request, out output, list runtime.Object, items storage.ListItems) func(io.Writer) error {
	if wantsPretty(r) || audit.From(r.Context()).Level() == auditv1.LevelRequestResponse {
		return nil // the codec's indentation, or the audit event's copy of the list
	}
	var src wire.Items = items
	ids := wire.Identities(items.Identity)
	switch out.as {
	case asObject:
		if err := meta.SetList(list, nil); err != nil {
			s.fallback("the list has no items field", list, err)
			return nil
		}
	case asMetadataList:
		pomList := emptyPartialMetadataList(list, out.version)
		if items.Len() > 0 {
			// [] in the head, for the items to go in; with none, the
			// whole list's null is written.
			pomList.Items = []metav1.PartialObjectMetadata{}
		}
		list, src, ids = pomList, metadataOfItems(items, out.version), nil
	default:
		return nil // a Table: the items become rows
	}
	gv := s.targetVersion(list)
	if !s.encodedAsIs(list, gv) {
		return nil // converted to another version, items too
	}
	var head bytes.Buffer
	if err := s.Serializer.EncoderForVersion(out.info.Serializer, gv).Encode(list, &head); err != nil {
		s.fallback("the list without items does not encode", list, err)
		return nil
	}
	switch out.info.MediaType {
	case runtime.ContentTypeJSON:
		if !bytes.HasSuffix(head.Bytes(), wire.JSONListEnd) {
			s.fallback("the JSON of the list does not end in its items", list, nil)
			return nil
		}
		typed := itemsLoseKinds(list)
		return func(w io.Writer) error { return s.Wire.WriteJSONList(w, head.Bytes(), src, typed, ids) }
	case runtime.ContentTypeProtobuf:
		return s.protobufListEncoder(out, list, head.Bytes(), src, ids, items, gv)
	}
	return nil // YAML
}

// protobufListEncoder is sharedListEncoder's protobuf case: head is the
// codec's encoding of the list without items.
func (s *Scope) protobufListEncoder(out output, list runtime.Object, head []byte, src wire.Items, ids wire.Identities, items storage.ListItems, gv schema.GroupVersion) func(io.Writer) error {
	var unk runtime.Unknown
	if !bytes.HasPrefix(head, wire.ProtobufPrefix) {
		s.fallback("the protobuf of the list lacks kube's prefix", list, nil)
		return nil
	}
	if err := unk.Unmarshal(head[len(wire.ProtobufPrefix):]); err != nil {
		s.fallback("the protobuf of the list is not an envelope", list, err)
		return nil
	}
	var stored func(int) ([]byte, error)
	if out.as == asObject {
		stored = items.Protobuf(gv)
	}
	if src.Len() > 0 && stored == nil {
		first, err := src.At(0)
		if err != nil {
			return nil // the codec's answer reports it
		}
		if !wire.IsProtobuf(first) {
			s.fallback("the items do not marshal themselves", list, nil)
			return nil
		}
	}
	return func(w io.Writer) error { return wire.WriteProtobufList(w, unk, s.Wire.ProtoItems(src, ids, stored)) }
}

// fallback reports, once per reason and kind, a list written whole.
func (s *Scope) fallback(reason string, list runtime.Object, err error) {
	s.Wire.Fallback(reason, fmt.Sprintf("%T", list), err)
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
