package apiextensions

import (
	"context"
	"sync"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/controlplane/controllers/garbagecollector"
	"github.com/capstan-io/capstan/storage/storagefactory"
)

// customResources tells the garbage collector which resources are custom
// resources, whether one holds objects, and when one may get its first:
// before the writable endpoints of a CRD are built, which every request
// that creates an object needs. The collector then watches only the
// custom resources that may have objects, not every CRD's.
type customResources struct {
	h *crdHandler

	mu       sync.Mutex
	writable []func(gr schema.GroupResource)
}

var _ garbagecollector.LazyResources = (*customResources)(nil)

// builtInGroups are the groups of built-in resources a CRD may shadow in
// storage: never lazy, whatever a CRD says.
var builtInGroups = map[string]bool{apiextv1.GroupName: true, "apiregistration.k8s.io": true}

// Lazy reports whether gr is the resource of a served CRD, whose name is
// <plural>.<group>.
func (c *customResources) Lazy(gr schema.GroupResource) bool {
	if builtInGroups[gr.Group] {
		return false
	}
	return c.h.served(gr.Resource+"."+gr.Group) != nil
}

// HasObjects counts the objects of gr in storage, without building the
// CRD's endpoints.
func (c *customResources) HasObjects(ctx context.Context, gr schema.GroupResource) (bool, error) {
	keyPrefix := "/" + gr.Group + "/" + gr.Resource
	st, err := c.h.storage.New(storagefactory.Spec{
		Resource: gr, KeyPrefix: keyPrefix, NoWatchCache: true, JSON: true,
		New:     func() runtime.Object { return &unstructured.Unstructured{} },
		NewList: func() runtime.Object { return &unstructured.UnstructuredList{} },
	})
	if err != nil {
		return false, err
	}
	n, err := st.Count(ctx, keyPrefix)
	return n > 0, err
}

// OnWritable registers f, and calls it at once with the resources whose
// writable endpoints were built already.
func (c *customResources) OnWritable(f func(gr schema.GroupResource)) {
	c.mu.Lock()
	c.writable = append(c.writable, f)
	c.mu.Unlock()
	var built []schema.GroupResource
	c.h.mu.RLock()
	for _, e := range c.h.entries {
		if e.built.Load() != nil {
			built = append(built, schema.GroupResource{Group: e.crd.Spec.Group, Resource: e.crd.Status.AcceptedNames.Plural})
		}
	}
	c.h.mu.RUnlock()
	for _, gr := range built {
		f(gr)
	}
}

// becomingWritable tells the registered functions that crd's resource
// may get objects.
func (c *customResources) becomingWritable(crd *apiextv1.CustomResourceDefinition) {
	c.mu.Lock()
	fs := c.writable
	c.mu.Unlock()
	gr := schema.GroupResource{Group: crd.Spec.Group, Resource: crd.Status.AcceptedNames.Plural}
	for _, f := range fs {
		f(gr)
	}
}
