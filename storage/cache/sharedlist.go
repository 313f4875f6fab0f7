package cache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"unsafe"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/storage"
)

// listItems are the selected elements of a list, handed over as
// storage.ListItems: each is decoded when asked for (see Cacher.object),
// and the cache keeps no decoding, so a list of an encoded cache holds
// one decoded item at a time whatever its length.
type listItems struct {
	c     *Cacher
	elems []*element
}

var _ storage.ListItems = listItems{}

func (l listItems) Len() int { return len(l.elems) }

func (l listItems) At(i int) (runtime.Object, error) { return l.c.object(l.elems[i]) }

func (l listItems) Key(i int) string { return l.elems[i].key }

// Identity is the element's encoding, or its object when the cache keeps
// objects decoded: a change makes a new element with its own.
func (l listItems) Identity(i int) *byte {
	e := l.elems[i]
	if e.data != nil {
		return unsafe.SliceData(e.data)
	}
	return (*byte)(reflect.ValueOf(e.obj).UnsafePointer())
}

// Protobuf returns what reads each item's message out of its encoding,
// when the cache keeps the items as kube's protobuf envelope at version
// gv: the message is then the very bytes a list of that version writes
// for the item, as the envelope's and the list's come from one Marshal of
// the same object (the cache encodes the object it decoded, with its
// resourceVersion). The envelope of the first item decides for all: the
// codec writes every one at its storage version.
func (l listItems) Protobuf(gv schema.GroupVersion) func(i int) ([]byte, error) {
	if l.c.codec == nil {
		return nil
	}
	if len(l.elems) > 0 {
		if apiVersion, _, err := protobufEnvelope(l.elems[0].data); err != nil || string(apiVersion) != gv.String() {
			return nil
		}
	}
	return func(i int) ([]byte, error) {
		msg, ok := l.elems[i].message()
		if !ok {
			return nil, fmt.Errorf("%s: %w", l.elems[i].key, errNotProtobuf)
		}
		return msg, nil
	}
}

// protobufPrefix starts kube's protobuf envelope: the magic, then a
// runtime.Unknown.
var protobufPrefix = []byte("k8s\x00")

// Fields of runtime.Unknown and of its runtime.TypeMeta.
const (
	unknownTypeMeta    = 1
	unknownRaw         = 2
	unknownContentType = 4
	typeMetaAPIVersion = 1
	typeMetaKind       = 2
)

var errNotProtobuf = errors.New("not kube's protobuf envelope of a protobuf message")

// protobufEnvelope reads the apiVersion and the message (Raw) of data,
// kube's protobuf envelope, without copying the message.
func protobufEnvelope(data []byte) (apiVersion, raw []byte, err error) {
	apiVersion, _, raw, err = protobufEnvelopeKind(data)
	return apiVersion, raw, err
}

// protobufEnvelopeKind is protobufEnvelope, with the kind.
func protobufEnvelopeKind(data []byte) (apiVersion, kind, raw []byte, err error) {
	if !bytes.HasPrefix(data, protobufPrefix) {
		return nil, nil, nil, errNotProtobuf
	}
	found := false
	err = eachField(data[len(protobufPrefix):], func(field uint64, value []byte) error {
		switch field {
		case unknownTypeMeta:
			return eachField(value, func(field uint64, value []byte) error {
				switch field {
				case typeMetaAPIVersion:
					apiVersion = value
				case typeMetaKind:
					kind = value
				}
				return nil
			})
		case unknownRaw:
			raw, found = value, true
		case unknownContentType:
			if len(value) > 0 && string(value) != runtime.ContentTypeProtobuf {
				return errNotProtobuf
			}
		}
		return nil
	})
	if err == nil && !found {
		err = errNotProtobuf
	}
	return apiVersion, kind, raw, err
}

// eachField calls f on each field of a protobuf message whose fields are
// all length-delimited (as runtime.Unknown's and runtime.TypeMeta's).
func eachField(msg []byte, f func(field uint64, value []byte) error) error {
	for len(msg) > 0 {
		tag, n := binary.Uvarint(msg)
		if n <= 0 || tag&7 != 2 {
			return errNotProtobuf
		}
		msg = msg[n:]
		size, n := binary.Uvarint(msg)
		if n <= 0 || size > uint64(len(msg)-n) {
			return errNotProtobuf
		}
		value := msg[n : n+int(size)]
		msg = msg[n+int(size):]
		if err := f(tag>>3, value); err != nil {
			return err
		}
	}
	return nil
}
