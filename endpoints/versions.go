package endpoints

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/admission"
)

// VersionIndex groups a server's endpoints by the stored resource they
// serve, so that each knows every version it is served at: kube's
// equivalent resources (autoscaling/v1 and v2 autoscalers, core and
// events.k8s.io events), which webhooks and policies with matchPolicy
// Equivalent match, converted by the server's convertor.
type VersionIndex struct {
	convertor runtime.ObjectConvertor
	creater   runtime.ObjectCreater

	mu    sync.Mutex // guards byKey
	byKey map[string]*admission.Versions
}

// NewVersionIndex returns an empty index converting with c into
// objects cr makes.
func NewVersionIndex(c runtime.ObjectConvertor, cr runtime.ObjectCreater) *VersionIndex {
	return &VersionIndex{convertor: c, creater: cr, byKey: map[string]*admission.Versions{}}
}

// add records v under key (the stored group, resource and subresource)
// and returns the versions of key, shared by all its endpoints. Groups
// are installed before the server serves, so the list is complete by
// the first write.
func (x *VersionIndex) add(key string, v admission.Version) *admission.Versions {
	x.mu.Lock()
	defer x.mu.Unlock()
	vs := x.byKey[key]
	if vs == nil {
		vs = &admission.Versions{Convert: x.convert}
		x.byKey[key] = vs
	}
	vs.List = append(vs.List, v)
	return vs
}

// convert makes an object of kind to and converts obj into it: the
// scheme's conversion functions know both ends (core and events.k8s.io
// events share no Go type, so converting "to a version" cannot find one).
func (x *VersionIndex) convert(_ context.Context, obj runtime.Object, to schema.GroupVersionKind) (runtime.Object, error) {
	out, err := x.creater.New(to)
	if err != nil {
		return nil, err
	}
	if reflect.TypeOf(out) == reflect.TypeOf(obj) {
		out = obj.DeepCopyObject()
	} else if err := x.convertor.Convert(obj.DeepCopyObject(), out, nil); err != nil {
		return nil, fmt.Errorf("converting to %v: %w", to, err)
	}
	out.GetObjectKind().SetGroupVersionKind(to)
	return out, nil
}

// versionKey is the stored resource an endpoint serves: the storage
// version's group (events.k8s.io events are core events), resource and
// subresource.
func versionKey(gv schema.GroupVersion, r Resource) string {
	group := gv.Group
	if r.StorageVersion != nil {
		group = r.StorageVersion.Group
	}
	return group + "/" + r.Name
}
