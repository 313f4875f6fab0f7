package handlers

import (
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// transform turns obj into the shape the client negotiated: a Table, or
// only its metadata (what garbage collectors and metadata informers read).
func (s *Scope) transform(r *http.Request, obj runtime.Object, out output) (runtime.Object, error) {
	if co, ok := obj.(runtime.CacheableObject); ok && out.as != asObject {
		obj = co.GetObject() // a shared object: only serializers read it
	}
	switch out.as {
	case asTable:
		return s.toTable(r, obj, out.version)
	case asMetadata:
		return partialMetadata(obj, out.version)
	case asMetadataList:
		return partialMetadataList(obj, out.version)
	}
	return obj, nil
}

func partialMetadata(obj runtime.Object, version string) (*metav1.PartialObjectMetadata, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	pom := meta.AsPartialObjectMetadata(m)
	pom.APIVersion, pom.Kind = metav1.GroupName+"/"+version, "PartialObjectMetadata"
	return pom, nil
}

func partialMetadataList(obj runtime.Object, version string) (*metav1.PartialObjectMetadataList, error) {
	list := emptyPartialMetadataList(obj, version)
	err := meta.EachListItem(obj, func(item runtime.Object) error {
		pom, err := partialMetadata(item, version)
		if err != nil {
			return err
		}
		list.Items = append(list.Items, *pom)
		return nil
	})
	return list, err
}

// emptyPartialMetadataList is the metadata list of obj, a list, without
// its items.
func emptyPartialMetadataList(obj runtime.Object, version string) *metav1.PartialObjectMetadataList {
	list := &metav1.PartialObjectMetadataList{}
	list.APIVersion, list.Kind = metav1.GroupName+"/"+version, "PartialObjectMetadataList"
	if li, err := meta.ListAccessor(obj); err == nil {
		list.ResourceVersion = li.GetResourceVersion()
		list.Continue = li.GetContinue()
		list.RemainingItemCount = li.GetRemainingItemCount()
	}
	return list
}
