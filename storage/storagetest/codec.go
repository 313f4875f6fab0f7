package storagetest

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/capstan-io/capstan/storage/storagecodec"
)

// scheme knows the k8s.io/api types. The storage tests build their own
// rather than import apis/scheme, so that they depend on nothing above
// the storage layer.
var scheme = runtime.NewScheme()

func init() { utilruntime.Must(clientgoscheme.AddToScheme(scheme)) }

// NewCodec returns the storage codec of the ConfigMaps the suite stores.
func NewCodec() runtime.Codec {
	return storagecodec.New(scheme, serializer.NewCodecFactory(scheme), corev1.SchemeGroupVersion)
}
