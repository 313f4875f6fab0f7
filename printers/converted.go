package printers

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/registry/rest"
)

// Converted prints the objects of another version of a kind (a beta
// version) with c, the printer of the version newObj and newList make (its
// GA version), as kube prints every version with the printer of its
// internal type. It is nil when c is: the kind has the default table.
func Converted(c rest.TableConvertor, convertor runtime.ObjectConvertor, newObj, newList func() runtime.Object) rest.TableConvertor {
	if c == nil {
		return nil
	}
	return converted{c: c, convertor: convertor, newObj: newObj, newList: newList}
}

type converted struct {
	c               rest.TableConvertor
	convertor       runtime.ObjectConvertor
	newObj, newList func() runtime.Object
}

func (p converted) ConvertToTable(ctx context.Context, obj runtime.Object, opts *metav1.TableOptions) (*metav1.Table, error) {
	out := p.newObj()
	if meta.IsListType(obj) {
		out = p.newList()
	}
	if err := p.convertor.Convert(obj, out, nil); err != nil {
		return nil, err
	}
	return p.c.ConvertToTable(ctx, out, opts)
}
