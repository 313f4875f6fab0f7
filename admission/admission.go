// Package admission is the chain of plugins that may change (mutate) or
// refuse (validate) a write after it is decoded and before it is stored.
package admission

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/capstan-io/capstan/metrics"
)

// Operation is the kind of write being admitted.
type Operation string

// The operations of admission, as kube names them.
const (
	Create  Operation = "CREATE"
	Update  Operation = "UPDATE"
	Delete  Operation = "DELETE"
	Connect Operation = "CONNECT"
)

// Attributes describe one write.
type Attributes struct {
	Operation   Operation
	Kind        schema.GroupVersionKind
	Resource    schema.GroupVersionResource
	Subresource string
	Namespace   string
	Name        string
	Object      runtime.Object // nil for delete
	OldObject   runtime.Object // nil for create
	DryRun      bool
	// Options are the write's CreateOptions, UpdateOptions or
	// DeleteOptions, when the caller has them.
	Options runtime.Object
	// Defaulter and Pruner, when set, are what the handler applied to the
	// decoded body: an object a plugin replaced (a webhook's patch) goes
	// through them again, custom resources pruned by their schema.
	Defaulter func(runtime.Object)
	Pruner    func(runtime.Object) ([]string, error)
	// Types, when set, are the structured-merge-diff types of the
	// resource's kinds, which a policy's ApplyConfiguration merges by.
	Types managedfields.TypeConverter
	// Reinvocation is the state of a mutating chain that may run twice;
	// Chain.Admit sets it.
	Reinvocation *Reinvocation
	// Versions, when set, are the resource's other served versions, which
	// webhooks and policies with matchPolicy Equivalent match.
	Versions *Versions
	// Requested is the write as requested when these attributes are its
	// view at another version (AsVersion); nil otherwise.
	Requested *Attributes
}

// Mutator may change a write's object.
type Mutator interface {
	Admit(ctx context.Context, a *Attributes) error
}

// Validator may refuse a write. It must not change the Attributes'
// objects: storage hands over the objects it writes and read, not copies.
type Validator interface {
	Validate(ctx context.Context, a *Attributes) error
}

// Handles is implemented by plugins that take part only in some operations.
type Handles interface {
	Handles(op Operation) bool
}

// Chain runs plugins in order: every Mutator first, then every Validator.
// A plugin may be both, and may be given as a Named plugin. The zero
// Chain admits everything.
type Chain []any

// Named is a plugin under kube's name for it, the name its durations are
// recorded by (apiserver_admission_controller_admission_duration_seconds).
type Named struct {
	Name   string
	Plugin any
}

// unname returns p's name ("" if it has none) and the plugin itself.
func unname(p any) (string, any) {
	if n, ok := p.(Named); ok {
		return n.Name, n.Plugin
	}
	return "", p
}

// Admit runs the mutating plugins, and runs them all once more when a
// webhook or policy asks for it (Reinvocation).
func (c Chain) Admit(ctx context.Context, a *Attributes) (err error) {
	defer func(start time.Time) { metrics.AdmissionStep("admit", string(a.Operation), start, err != nil) }(time.Now())
	if a.Reinvocation == nil {
		a.Reinvocation = &Reinvocation{}
	}
	if err := c.admitOnce(ctx, a); err != nil {
		return err
	}
	if r := a.Reinvocation; r.wanted && !r.again {
		r.again = true
		return c.admitOnce(ctx, a)
	}
	return nil
}

func (c Chain) admitOnce(ctx context.Context, a *Attributes) error {
	for _, p := range c {
		name, p := unname(p)
		m, ok := p.(Mutator)
		if !ok || !handles(p, a.Operation) {
			continue
		}
		start := time.Now()
		err := m.Admit(ctx, a)
		if name != "" {
			metrics.AdmissionPlugin(name, "admit", string(a.Operation), start, err != nil)
		}
		if err != nil {
			return asStatus(err)
		}
	}
	return nil
}

// Validate runs the validating plugins.
func (c Chain) Validate(ctx context.Context, a *Attributes) (err error) {
	defer func(start time.Time) { metrics.AdmissionStep("validate", string(a.Operation), start, err != nil) }(time.Now())
	for _, p := range c {
		name, p := unname(p)
		v, ok := p.(Validator)
		if !ok || !handles(p, a.Operation) {
			continue
		}
		start := time.Now()
		err := v.Validate(ctx, a)
		if name != "" {
			metrics.AdmissionPlugin(name, "validate", string(a.Operation), start, err != nil)
		}
		if err != nil {
			return asStatus(err)
		}
	}
	return nil
}

func handles(p any, op Operation) bool {
	h, ok := p.(Handles)
	return !ok || h.Handles(op)
}

// ReadyWait is how long an admission waits for a plugin's first list of
// its configuration, kube's.
const ReadyWait = 10 * time.Second

// WaitSynced waits up to ReadyWait for synced to close, then refuses the
// write as kube does when a plugin has not read its configuration yet.
func WaitSynced(ctx context.Context, synced <-chan struct{}, a *Attributes) error {
	select {
	case <-synced:
		return nil
	default:
	}
	t := time.NewTimer(ReadyWait)
	defer t.Stop()
	select {
	case <-synced:
		return nil
	case <-t.C:
	case <-ctx.Done():
	}
	return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, errors.New("not yet ready to handle request"))
}
