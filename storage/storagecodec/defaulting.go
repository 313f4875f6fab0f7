package storagecodec

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// WithDefaults returns codec with defaults applied to every object it
// decodes, as kube's storage codec applies its scheme's defaulters on
// decode. What is read from storage (a get, a list, the watch cache's
// objects) is then already defaulted, so that reads never change an object
// another reader may share: an object written by an older server, which
// lacked a newer default, gains it here. A nil default returns codec.
func WithDefaults(codec runtime.Codec, defaults func(runtime.Object)) runtime.Codec {
	if defaults == nil {
		return codec
	}
	d := defaultingCodec{Codec: codec, defaults: defaults}
	if c, ok := codec.(carrier); ok {
		return carryingDefaults{defaultingCodec: d, carrier: c}
	}
	return d
}

// carrier is a codec that keeps, through an update, the stored fields its
// objects cannot hold (NewConverting's).
type carrier interface {
	Carry(data, old []byte) ([]byte, error)
}

// carryingDefaults is a defaulting codec over a carrier, which it stays.
type carryingDefaults struct {
	defaultingCodec
	carrier
}

type defaultingCodec struct {
	runtime.Codec
	defaults func(runtime.Object)
}

func (c defaultingCodec) Decode(data []byte, gvk *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	obj, kind, err := c.Codec.Decode(data, gvk, into)
	if err == nil && obj != nil {
		c.defaults(obj)
	}
	return obj, kind, err
}
