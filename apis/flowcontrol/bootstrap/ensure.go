package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	flowcontrolclient "k8s.io/client-go/kubernetes/typed/flowcontrol/v1"

	"github.com/capstan-io/capstan/internal/parallel"
)

// FieldManager is the manager of the fields the reconciler writes, kube's.
const FieldManager = "api-priority-and-fairness-config-producer-v1"

// Reconciler brings the stored configuration up to the bootstrap objects
// through the API, as kube's priority-and-fairness-config-producer does:
//   - a missing mandatory or suggested object is created;
//   - a mandatory object gets its spec back (exempt keeps its spec.exempt),
//     and the autoupdate-spec annotation "true";
//   - a suggested object gets the bootstrap spec only when its
//     autoupdate-spec annotation says "true", or, without a readable one,
//     while it is at generation 1 (nobody changed it since its creation);
//     the annotation is then set to what was decided;
//   - an object that is no longer part of the bootstrap configuration is
//     deleted if its annotation says "true".
type Reconciler struct {
	Client flowcontrolclient.FlowcontrolV1Interface
	Logger *slog.Logger
}

// concurrency is how many objects are written at once: each write mostly
// waits for its etcd commit, and concurrent commits share a sync.
const concurrency = 16

// Ensure reconciles once, reading each kind with one list (from the watch
// cache). A concurrent update of an object is left for the next run.
func (r Reconciler) Ensure(ctx context.Context) error {
	levels, err := r.Client.PriorityLevelConfigurations().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return fmt.Errorf("listing priority levels: %w", err)
	}
	schemas, err := r.Client.FlowSchemas().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return fmt.Errorf("listing flow schemas: %w", err)
	}
	lops := r.levelOps()
	fops := r.schemaOps()
	existingLevels := byName(pointers(levels.Items))
	existingSchemas := byName(pointers(schemas.Items))
	// The objects are written concurrently, the levels before the schemas
	// that name them, so that no schema is seen dangling meanwhile.
	levelErr := parallel.Do(concurrency, slices.Concat(
		ensureAll(ctx, lops, existingLevels, SuggestedPriorityLevelConfigurations(), false),
		ensureAll(ctx, lops, existingLevels, MandatoryPriorityLevelConfigurations(), true))...)
	schemaErr := parallel.Do(concurrency, slices.Concat(
		ensureAll(ctx, fops, existingSchemas, SuggestedFlowSchemas(), false),
		ensureAll(ctx, fops, existingSchemas, MandatoryFlowSchemas(), true))...)
	removeErr := parallel.Do(concurrency, slices.Concat(
		removeUnwanted(ctx, fops, existingSchemas, append(MandatoryFlowSchemas(), SuggestedFlowSchemas()...)),
		removeUnwanted(ctx, lops, existingLevels, append(MandatoryPriorityLevelConfigurations(), SuggestedPriorityLevelConfigurations()...)))...)
	return errors.Join(levelErr, schemaErr, removeErr)
}

// object is a FlowSchema or a PriorityLevelConfiguration.
type object interface {
	*flowcontrolv1.FlowSchema | *flowcontrolv1.PriorityLevelConfiguration
	metav1.Object
}

// ops are the operations the reconciler needs on one kind.
type ops[T object] struct {
	kind   string
	logger *slog.Logger
	get    func(ctx context.Context, name string) (T, error)
	create func(ctx context.Context, obj T) error
	update func(ctx context.Context, obj T) error
	delete func(ctx context.Context, name string, uid string) error
	// specEqual reports whether current's spec is bootstrap's as far as
	// the reconciler cares.
	specEqual func(bootstrap, current T) bool
	// withSpec is a copy of current with bootstrap's spec.
	withSpec func(current, bootstrap T) T
	copy     func(T) T
}

func (r Reconciler) levelOps() ops[*flowcontrolv1.PriorityLevelConfiguration] {
	type pl = flowcontrolv1.PriorityLevelConfiguration
	c := r.Client.PriorityLevelConfigurations()
	o := levelLocalOps()
	o.logger = r.Logger
	o.get = func(ctx context.Context, name string) (*pl, error) { return c.Get(ctx, name, metav1.GetOptions{}) }
	o.create = func(ctx context.Context, obj *pl) error {
		_, err := c.Create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager})
		return err
	}
	o.update = func(ctx context.Context, obj *pl) error {
		_, err := c.Update(ctx, obj, metav1.UpdateOptions{FieldManager: FieldManager})
		return err
	}
	o.delete = func(ctx context.Context, name, uid string) error { return c.Delete(ctx, name, deleteIfUID(uid)) }
	return o
}

func (r Reconciler) schemaOps() ops[*flowcontrolv1.FlowSchema] {
	type fs = flowcontrolv1.FlowSchema
	c := r.Client.FlowSchemas()
	o := schemaLocalOps()
	o.logger = r.Logger
	o.get = func(ctx context.Context, name string) (*fs, error) { return c.Get(ctx, name, metav1.GetOptions{}) }
	o.create = func(ctx context.Context, obj *fs) error {
		_, err := c.Create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager})
		return err
	}
	o.update = func(ctx context.Context, obj *fs) error {
		_, err := c.Update(ctx, obj, metav1.UpdateOptions{FieldManager: FieldManager})
		return err
	}
	o.delete = func(ctx context.Context, name, uid string) error { return c.Delete(ctx, name, deleteIfUID(uid)) }
	return o
}

// levelLocalOps are the operations on priority levels that need no server.
func levelLocalOps() ops[*flowcontrolv1.PriorityLevelConfiguration] {
	type pl = flowcontrolv1.PriorityLevelConfiguration
	return ops[*pl]{
		kind: "PriorityLevelConfiguration", specEqual: levelSpecEqual, copy: (*pl).DeepCopy,
		withSpec: func(current, bootstrap *pl) *pl {
			out := current.DeepCopy()
			out.Spec = *bootstrap.Spec.DeepCopy()
			return out
		},
	}
}

// schemaLocalOps are the operations on flow schemas that need no server.
func schemaLocalOps() ops[*flowcontrolv1.FlowSchema] {
	type fs = flowcontrolv1.FlowSchema
	return ops[*fs]{
		kind: "FlowSchema", copy: (*fs).DeepCopy,
		specEqual: func(bootstrap, current *fs) bool { return apiequality.Semantic.DeepEqual(bootstrap.Spec, current.Spec) },
		withSpec: func(current, bootstrap *fs) *fs {
			out := current.DeepCopy()
			out.Spec = *bootstrap.Spec.DeepCopy()
			return out
		},
	}
}

// levelSpecEqual compares priority level specs as the reconciler does:
// the exempt level's concurrency shares and lendable percent are the
// administrator's to set.
func levelSpecEqual(bootstrap, current *flowcontrolv1.PriorityLevelConfiguration) bool {
	want := bootstrap.Spec.DeepCopy()
	if bootstrap.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt {
		if current.Spec.Exempt == nil || want.Exempt == nil {
			return false
		}
		want.Exempt.NominalConcurrencyShares = current.Spec.Exempt.NominalConcurrencyShares
		want.Exempt.LendablePercent = current.Spec.Exempt.LendablePercent
	}
	return apiequality.Semantic.DeepEqual(*want, current.Spec)
}

func deleteIfUID(uid string) metav1.DeleteOptions {
	if uid == "" {
		return metav1.DeleteOptions{}
	}
	u := types.UID(uid)
	return metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &u}}
}

// ensureAll is the work of bringing each of boots about.
func ensureAll[T object](ctx context.Context, o ops[T], existing map[string]T, boots []T, mandatory bool) []func() error {
	work := make([]func() error, 0, len(boots))
	for _, b := range boots {
		current, found := existing[b.GetName()]
		work = append(work, func() error {
			if err := ensureOne(ctx, o, current, found, b, mandatory); err != nil {
				return fmt.Errorf("%s %s: %w", o.kind, b.GetName(), err)
			}
			return nil
		})
	}
	return work
}

// ensureOne creates bootstrap when there is no current object and
// otherwise revises current as revise says.
func ensureOne[T object](ctx context.Context, o ops[T], current T, found bool, bootstrap T, mandatory bool) error {
	if !found {
		err := o.create(ctx, o.copy(bootstrap))
		if err == nil {
			o.logger.Debug("created APF bootstrap object", "kind", o.kind, "name", bootstrap.GetName(), "mandatory", mandatory)
			return nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return err
		}
		// Created meanwhile: revise what is there now.
		if current, err = o.get(ctx, bootstrap.GetName()); err != nil {
			return err
		}
	}
	revised, ok := revise(o, current, bootstrap, mandatory)
	if !ok {
		return nil
	}
	err := o.update(ctx, revised)
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		// Someone else changed it; the next run looks again.
		return nil
	}
	if err == nil {
		o.logger.Debug("updated APF bootstrap object", "kind", o.kind, "name", bootstrap.GetName(), "mandatory", mandatory)
	}
	return err
}

// revise returns current as the reconciler wants it and whether that
// differs from current.
func revise[T object](o ops[T], current, bootstrap T, mandatory bool) (T, bool) {
	autoUpdate := mandatory || wantsAutoUpdate(current)
	fixAnnotation := !annotationSays(current, autoUpdate)
	fixSpec := autoUpdate && !o.specEqual(bootstrap, current)
	if !fixAnnotation && !fixSpec {
		var unchanged T
		return unchanged, false
	}
	var revised T
	if fixSpec {
		revised = o.withSpec(current, bootstrap)
	} else {
		revised = o.copy(current)
	}
	if fixAnnotation {
		annotations := revised.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[flowcontrolv1.AutoUpdateAnnotationKey] = strconv.FormatBool(autoUpdate)
		revised.SetAnnotations(annotations)
	}
	return revised, true
}

// wantsAutoUpdate reads the autoupdate-spec annotation of a suggested
// object; without a boolean there, an object nobody has changed since it
// was created (generation 1) is kept up to date.
func wantsAutoUpdate(obj metav1.Object) bool {
	if v, err := strconv.ParseBool(obj.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey]); err == nil {
		return v
	}
	return obj.GetGeneration() == 1
}

// annotationSays reports whether obj's annotation is the boolean want.
func annotationSays(obj metav1.Object, want bool) bool {
	v, ok := obj.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey]
	if !ok {
		return false
	}
	b, err := strconv.ParseBool(v)
	return err == nil && b == want
}

// removeUnwanted deletes the objects the server made that are no longer
// part of the bootstrap configuration: those whose annotation says "true".
func removeUnwanted[T object](ctx context.Context, o ops[T], existing map[string]T, boots []T) []func() error {
	wanted := map[string]bool{}
	for _, b := range boots {
		wanted[b.GetName()] = true
	}
	var work []func() error
	for _, name := range slices.Sorted(maps.Keys(existing)) {
		obj := existing[name]
		if wanted[name] {
			continue
		}
		if auto, err := strconv.ParseBool(obj.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey]); err != nil || !auto {
			continue
		}
		work = append(work, func() error {
			err := o.delete(ctx, name, string(obj.GetUID()))
			switch {
			case err == nil:
				o.logger.Debug("deleted unwanted APF object", "kind", o.kind, "name", name)
			case apierrors.IsNotFound(err), apierrors.IsConflict(err):
			default:
				return fmt.Errorf("deleting %s %s: %w", o.kind, name, err)
			}
			return nil
		})
	}
	return work
}

func pointers[E any](items []E) []*E {
	out := make([]*E, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

func byName[T metav1.Object](objs []T) map[string]T {
	out := make(map[string]T, len(objs))
	for _, o := range objs {
		out[o.GetName()] = o
	}
	return out
}
