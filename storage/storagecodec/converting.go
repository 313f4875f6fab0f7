package storagecodec

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// NewConverting returns a storage codec that stores at storageGV and hands
// out objects at memoryGV, converting through the scheme's conversion
// functions. events.k8s.io/v1 Events are stored as core/v1 Events this way,
// as kube stores them, so both APIs serve the same objects.
func NewConverting(scheme *runtime.Scheme, codecs serializer.CodecFactory, storageGV, memoryGV schema.GroupVersion) runtime.Codec {
	pb := protobuf.NewSerializer(scheme, scheme)
	// The two versions may be in different groups: each versioner takes
	// the kinds of both groups, or the scheme would refuse to convert
	// across them.
	groups := []schema.GroupKind{{Group: storageGV.Group}, {Group: memoryGV.Group}}
	encodeTo := runtime.NewMultiGroupVersioner(storageGV, groups...)
	decodeTo := runtime.NewMultiGroupVersioner(memoryGV, groups...)
	return codecs.CodecForVersions(pb, decoder(scheme, pb), encodeTo, decodeTo)
}
