package core

import (
	"context"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/warning"
)

// Probe checks one component and reports its Healthy condition's status,
// message and error.
type Probe func(ctx context.Context) corev1.ComponentCondition

// ComponentStatusREST serves the deprecated componentstatuses: the health
// of the components kube-apiserver knows of, probed at every read and
// never stored.
type ComponentStatusREST struct {
	probes map[string]Probe
}

var (
	_ rest.Getter = (*ComponentStatusREST)(nil)
	_ rest.Lister = (*ComponentStatusREST)(nil)
	_ rest.Scoper = (*ComponentStatusREST)(nil)
)

// NewComponentStatusREST serves one status per named probe.
func NewComponentStatusREST(probes map[string]Probe) *ComponentStatusREST {
	return &ComponentStatusREST{probes: probes}
}

// New returns an empty ComponentStatus.
func (*ComponentStatusREST) New() runtime.Object { return &corev1.ComponentStatus{} }

// NewList returns an empty ComponentStatusList.
func (*ComponentStatusREST) NewList() runtime.Object { return &corev1.ComponentStatusList{} }

// NamespaceScoped is false.
func (*ComponentStatusREST) NamespaceScoped() bool { return false }

// componentStatusDeprecated is kube's warning on every read of the API,
// deprecated since v1.19.
const componentStatusDeprecated = "v1 ComponentStatus is deprecated in v1.19+"

// Get probes the named component.
func (r *ComponentStatusREST) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	warning.Add(ctx, componentStatusDeprecated)
	p, ok := r.probes[name]
	if !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("componentstatus"), name)
	}
	return componentStatus(ctx, name, p), nil
}

// List probes every component at once and keeps those the selectors pick
// (metadata.name is the only field).
func (r *ComponentStatusREST) List(ctx context.Context, opts *rest.ListOptions) (runtime.Object, error) {
	warning.Add(ctx, componentStatusDeprecated)
	var mu sync.Mutex
	var wg sync.WaitGroup
	list := &corev1.ComponentStatusList{Items: []corev1.ComponentStatus{}}
	for name, p := range r.probes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := componentStatus(ctx, name, p)
			mu.Lock()
			defer mu.Unlock()
			list.Items = append(list.Items, *s)
		}()
	}
	wg.Wait()
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	kept := list.Items[:0]
	for _, s := range list.Items {
		if selected(opts, s) {
			kept = append(kept, s)
		}
	}
	list.Items = kept
	return list, nil
}

func selected(opts *rest.ListOptions, s corev1.ComponentStatus) bool {
	if opts == nil {
		return true
	}
	if opts.LabelSelector != nil && !opts.LabelSelector.Matches(labels.Set(s.Labels)) {
		return false
	}
	return opts.FieldSelector == nil || opts.FieldSelector.Matches(fields.Set{"metadata.name": s.Name})
}

func componentStatus(ctx context.Context, name string, p Probe) *corev1.ComponentStatus {
	c := p(ctx)
	c.Type = corev1.ComponentHealthy
	return &corev1.ComponentStatus{ObjectMeta: metav1.ObjectMeta{Name: name}, Conditions: []corev1.ComponentCondition{c}}
}
