package storagecodec

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// NewConverting returns a storage codec that stores at storageGV and hands
// out objects at memoryGV, converting through the scheme's conversion
// functions. events.k8s.io/v1 Events are stored as core/v1 Events this way,
// as kube stores them, so both APIs serve the same objects; so are the
// resources kube stores at an older version than it serves.
//
// Its Carry keeps, through an update, the fields of a stored object that
// memoryGV cannot hold.
func NewConverting(scheme *runtime.Scheme, codecs serializer.CodecFactory, storageGV, memoryGV schema.GroupVersion) runtime.Codec {
	pb := protobuf.NewSerializer(scheme, scheme)
	// The two versions may be in different groups: each versioner takes
	// the kinds of both groups, or the scheme would refuse to convert
	// across them.
	groups := []schema.GroupKind{{Group: storageGV.Group}, {Group: memoryGV.Group}}
	encodeTo := runtime.NewMultiGroupVersioner(storageGV, groups...)
	decodeTo := runtime.NewMultiGroupVersioner(memoryGV, groups...)
	return convertingCodec{
		Codec:  codecs.CodecForVersions(pb, decoder(scheme, pb), encodeTo, decodeTo),
		stored: decoder(scheme, pb), scheme: scheme, storageGV: storageGV, memory: decodeTo,
	}
}

type convertingCodec struct {
	runtime.Codec
	// stored decodes stored bytes at the version they were written at.
	stored    runtime.Decoder
	scheme    *runtime.Scheme
	storageGV schema.GroupVersion
	memory    runtime.GroupVersioner
}

// Carry returns data, the encoding of an update of the object whose
// stored bytes are old, with the fields of old that a trip through the
// version in memory loses (none, but for a version with fields its
// neighbour lacks): they were not in the update, which could not hold
// them. The two decodes and conversions are paid on updates only.
func (c convertingCodec) Carry(data, old []byte) ([]byte, error) {
	before, gvk, err := c.stored.Decode(old, nil, nil)
	if err != nil || gvk.GroupVersion() != c.storageGV {
		return data, nil // nothing stored at the storage version to keep
	}
	inMemory, err := c.scheme.ConvertToVersion(before.DeepCopyObject(), c.memory)
	if err != nil {
		return nil, fmt.Errorf("carrying fields of %s: %w", gvk, err)
	}
	after, err := c.scheme.ConvertToVersion(inMemory, c.storageGV)
	if err != nil {
		return nil, fmt.Errorf("carrying fields of %s: %w", gvk, err)
	}
	lost, err := LostFields(before, after)
	if err != nil || len(lost) == 0 {
		return data, err
	}
	updated, _, err := c.stored.Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("carrying fields of %s: %w", gvk, err)
	}
	if err := lost.Restore(updated); err != nil {
		return nil, err
	}
	return runtime.Encode(c.Codec, updated)
}
