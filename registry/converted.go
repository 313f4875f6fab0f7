package registry

import (
	"context"
	"fmt"
	"reflect"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/storage/storagecodec"
)

// Converted is the strategy of another version of a resource: every call
// converts the objects to the version strategy works on (the GA version
// of a beta one), runs strategy and converts the result back, so that a
// beta version gets the defaults, preparation and validation of its GA
// version, with the GA version's field paths, as in kube, which runs them
// on the internal version.
//
// It forwards each optional capability strategy has, behaving as the
// Store does without it otherwise; strategies with deletion capabilities
// are refused (none of the converted ones has any).
func Converted(strategy Strategy, convertor runtime.ObjectConvertor, newObj func() runtime.Object) (Strategy, error) {
	switch strategy.(type) {
	case DeletionHolder, GracefulDeleter, GarbageCollectionDefaulter, DeleteWarner, DeleteOnUpdater:
		return nil, fmt.Errorf("converted strategy: %T has deletion capabilities, which are not forwarded", strategy)
	}
	return converted{s: strategy, c: convertor, newObj: newObj}, nil
}

type converted struct {
	s      Strategy
	c      runtime.ObjectConvertor
	newObj func() runtime.Object
}

var (
	_ Strategy             = converted{}
	_ Defaulter            = converted{}
	_ CreateOnUpdater      = converted{}
	_ FieldSelectable      = converted{}
	_ WarningsOnCreate     = converted{}
	_ WarningsOnUpdate     = converted{}
	_ NameValidator        = converted{}
	_ Canonicalizer        = converted{}
	_ UnconditionalUpdater = converted{}
)

// to converts obj to the strategy's version.
func (c converted) to(obj runtime.Object) (runtime.Object, error) {
	out := c.newObj()
	if err := c.c.Convert(obj, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// apply runs fn on obj converted, then writes the result back into obj.
// obj is left as it was if a conversion fails, which only a value JSON
// cannot hold would make happen.
func (c converted) apply(obj runtime.Object, fn func(runtime.Object)) {
	in, err := c.to(obj)
	if err != nil {
		return
	}
	lost, err := c.lost(obj, in)
	if err != nil {
		return
	}
	fn(in)
	gvk := obj.GetObjectKind().GroupVersionKind()
	out := reflect.New(reflect.TypeOf(obj).Elem())
	if err := c.c.Convert(in, out.Interface(), nil); err != nil {
		return
	}
	if err := lost.Restore(out.Interface()); err != nil {
		return
	}
	reflect.ValueOf(obj).Elem().Set(out.Elem())
	obj.GetObjectKind().SetGroupVersionKind(gvk)
}

// lost is what of obj its conversion in, to the strategy's version, does
// not hold (fields of obj's version alone, as a PodCertificateRequest's
// pkixPublicKey at v1beta1), which apply keeps: kube's strategies see them
// in its internal types.
func (c converted) lost(obj, in runtime.Object) (storagecodec.Lost, error) {
	back := reflect.New(reflect.TypeOf(obj).Elem()).Interface()
	if err := c.c.Convert(in.DeepCopyObject(), back, nil); err != nil {
		return nil, err
	}
	return storagecodec.LostFields(obj, back)
}

// both converts obj and old.
func (c converted) both(obj, old runtime.Object) (runtime.Object, runtime.Object, error) {
	in, err := c.to(obj)
	if err != nil {
		return nil, nil, err
	}
	oldIn, err := c.to(old)
	return in, oldIn, err
}

func (c converted) NamespaceScoped() bool { return c.s.NamespaceScoped() }

func (c converted) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	c.apply(obj, func(in runtime.Object) { c.s.PrepareForCreate(ctx, in) })
}

func (c converted) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	oldIn, err := c.to(old)
	if err != nil {
		return
	}
	c.apply(obj, func(in runtime.Object) { c.s.PrepareForUpdate(ctx, in, oldIn) })
}

func (c converted) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	in, err := c.to(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return c.s.Validate(ctx, in)
}

func (c converted) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	in, oldIn, err := c.both(obj, old)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return c.s.ValidateUpdate(ctx, in, oldIn)
}

func (c converted) Default(obj runtime.Object) {
	if d, ok := c.s.(Defaulter); ok {
		c.apply(obj, d.Default)
	}
}

func (c converted) Canonicalize(obj runtime.Object) {
	if d, ok := c.s.(Canonicalizer); ok {
		c.apply(obj, d.Canonicalize)
	}
}

func (c converted) AllowCreateOnUpdate() bool {
	u, ok := c.s.(CreateOnUpdater)
	return ok && u.AllowCreateOnUpdate()
}

func (c converted) AllowUnconditionalUpdate() bool {
	u, ok := c.s.(UnconditionalUpdater)
	return !ok || u.AllowUnconditionalUpdate()
}

func (c converted) ValidateName(name string, prefix bool) []string {
	if v, ok := c.s.(NameValidator); ok {
		return v.ValidateName(name, prefix)
	}
	return apivalidation.NameIsDNSSubdomain(name, prefix)
}

// Fields are those of the converted object; the field selector keys of a
// beta version are its GA version's.
func (c converted) Fields(obj runtime.Object) fields.Set {
	f, ok := c.s.(FieldSelectable)
	if !ok {
		return nil
	}
	in, err := c.to(obj)
	if err != nil {
		return nil
	}
	return f.Fields(in)
}

func (c converted) WarningsOnCreate(ctx context.Context, obj runtime.Object) []string {
	w, ok := c.s.(WarningsOnCreate)
	if !ok {
		return nil
	}
	in, err := c.to(obj)
	if err != nil {
		return nil
	}
	return w.WarningsOnCreate(ctx, in)
}

func (c converted) WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string {
	w, ok := c.s.(WarningsOnUpdate)
	if !ok {
		return nil
	}
	in, oldIn, err := c.both(obj, old)
	if err != nil {
		return nil
	}
	return w.WarningsOnUpdate(ctx, in, oldIn)
}
