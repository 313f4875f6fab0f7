package handlers

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"

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
	if err := s.checkMetadataShape(obj, out); err != nil {
		return nil, err
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

// checkMetadataShape refuses the metadata of one object for a list, and a
// metadata list for one object, with kube's 406: it names the Go type kube
// holds the answer in.
func (s *Scope) checkMetadataShape(obj runtime.Object, out output) error {
	var msg string
	switch {
	case out.as == asMetadata && meta.IsListType(obj):
		msg = "you requested PartialObjectMetadata, but the requested object is a list (%s)"
	case out.as == asMetadataList && !meta.IsListType(obj):
		msg = "you requested PartialObjectMetadataList, but the requested object is not a list (%s)"
	default:
		return nil
	}
	err := NewStatusError(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable, fmt.Sprintf(msg, s.internalTypeName(obj)))
	err.ErrStatus.Details = nil // kube's has none
	return err
}

// internalTypeName is how kube prints the Go type of obj: built-in objects
// are of its internal types (*core.ConfigMap, *apps.DeploymentList),
// custom resources unstructured.
func (s *Scope) internalTypeName(obj runtime.Object) string {
	t := reflect.TypeOf(obj)
	if _, ok := obj.(runtime.Unstructured); ok || t.Kind() != reflect.Pointer {
		return t.String()
	}
	return "*" + internalPackage(s.Kind.Group) + "." + t.Elem().Name()
}

// internalPackage is the package of kube's internal types of group.
func internalPackage(group string) string {
	switch group {
	case "", "events.k8s.io":
		return "core"
	case "internal.apiserver.k8s.io":
		return "apiserverinternal"
	}
	pkg, _, _ := strings.Cut(group, ".")
	return pkg
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
