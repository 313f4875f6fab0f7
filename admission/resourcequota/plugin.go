// Package resourcequota is kube's ResourceQuota admission plugin: a write
// that would take a namespace's usage past a ResourceQuota's hard limits is
// refused, and an admitted one is charged to the quota's status.used
// before it is stored, inside an optimistic update of the quota, so that
// concurrent writes cannot together exceed it; an update is charged what
// it adds to the old object's usage. Usage is kube's: object counts
// (count/<resource>.<group> and the legacy names), pods' compute resources,
// services' load balancers and node ports, claims' storage (per storage
// class too); scopes and scope selectors of pods, and claims'
// VolumeAttributesClass scope.
package resourcequota

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/admission"
)

// Lister lists a namespace's quotas (from a cache: Charge sees the latest).
type Lister func(ctx context.Context, namespace string) ([]corev1.ResourceQuota, error)

// Charger updates one quota: update runs on the quota's latest state, as
// often as a concurrent write makes it, and its error ends the update.
type Charger func(ctx context.Context, namespace, name string, update func(*corev1.ResourceQuota) error) error

// Plugin is the ResourceQuota plugin.
type Plugin struct {
	list    Lister
	charge  Charger
	limited []LimitedResource
}

// New returns the plugin.
func New(list Lister, charge Charger, cfg *Configuration) *Plugin {
	p := &Plugin{list: list, charge: charge}
	if cfg != nil {
		p.limited = cfg.LimitedResources
	}
	return p
}

var (
	_ admission.Validator = (*Plugin)(nil)
	_ admission.Handles   = (*Plugin)(nil)
)

// Handles creates and updates: an update is charged what it adds (a
// claim growing, a service turning LoadBalancer, a pod resized).
func (*Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Validate checks the namespace's quotas and charges them.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	ev := evaluatorFor(a.Resource.GroupResource())
	if a.Namespace == "" || a.Object == nil || !ev.handles(a) {
		return nil
	}
	quotas, err := p.list(ctx, a.Namespace)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("error looking up quotas: %w", err))
	}
	limited := p.limitedNames(a, ev)
	if len(quotas) == 0 && len(p.limited) == 0 {
		return nil
	}
	charged, covered, err := interesting(a, ev, quotas)
	if err != nil {
		return err
	}
	var uncovered []corev1.ResourceName
	for _, n := range limited {
		if !covered[corev1.ResourceName(n)] {
			uncovered = append(uncovered, corev1.ResourceName(n))
		}
	}
	if len(uncovered) > 0 {
		return admission.NewForbidden(a, fmt.Errorf("insufficient quota to consume: %s", prettyPrintNames(uncovered)))
	}
	if err := p.uncoveredScopes(ev, quotas, a.Object); err != nil {
		return err
	}
	deltas, err := deltasOf(a, ev, charged)
	if err != nil {
		return err
	}
	for i, q := range charged {
		if len(deltas[i]) == 0 {
			continue
		}
		if err := p.chargeOne(ctx, a, q, deltas[i]); err != nil {
			return err
		}
	}
	return nil
}

// interesting are the quotas that charge the object, and the names they
// cover; an object a quota cannot charge (a container without the limits
// it needs) or a quota whose usage is not yet known refuses the write.
func interesting(a *admission.Attributes, ev evaluator, quotas []corev1.ResourceQuota) ([]corev1.ResourceQuota, map[corev1.ResourceName]bool, error) {
	var charged []corev1.ResourceQuota
	covered := map[corev1.ResourceName]bool{}
	for _, q := range quotas {
		restricted, err := matching(ev, &q, a.Object)
		if err != nil {
			return nil, nil, err
		}
		if restricted == nil {
			continue
		}
		if err := ev.constraints(restricted, a.Object); err != nil {
			return nil, nil, admission.NewForbidden(a, fmt.Errorf("failed quota: %s: %w", q.Name, err))
		}
		for _, n := range restricted {
			if _, ok := q.Status.Used[n]; !ok {
				return nil, nil, admission.NewForbidden(a, fmt.Errorf("status unknown for quota: %s, resources: %s", q.Name, prettyPrintNames(restricted)))
			}
			covered[n] = true
		}
		charged = append(charged, q)
	}
	return charged, covered, nil
}

// deltasOf is what each quota is charged, kube's way: a create all its
// usage; an update what it adds to the old object's, where the quota
// charged the old object too, and all its usage where it did not.
func deltasOf(a *admission.Attributes, ev evaluator, quotas []corev1.ResourceQuota) ([]corev1.ResourceList, error) {
	usage, err := ev.usage(a.Object)
	if err != nil {
		return nil, err
	}
	if neg := negative(usage); len(neg) > 0 {
		return nil, admission.NewForbidden(a, fmt.Errorf("quota usage is negative for resource(s): %s", prettyPrintNames(neg)))
	}
	out := make([]corev1.ResourceList, len(quotas))
	for i := range out {
		out[i] = usage
	}
	if a.Operation == admission.Update {
		if a.OldObject == nil {
			return nil, admission.NewForbidden(a, errors.New("unable to get previous usage since prior version of object was not found"))
		}
		if m, err := meta.Accessor(a.OldObject); err == nil && m.GetResourceVersion() != "" {
			prev, err := ev.usage(a.OldObject)
			if err != nil {
				return nil, err
			}
			delta := subtractNonNegative(usage, prev)
			for i := range quotas {
				charged, err := matching(ev, &quotas[i], a.OldObject)
				if err != nil {
					return nil, err
				}
				if charged != nil {
					out[i] = delta
				}
			}
		}
	}
	for i := range out {
		out[i] = removeZeros(out[i])
	}
	return out, nil
}

// chargeOne adds usage to the quota, or refuses it with kube's message.
func (p *Plugin) chargeOne(ctx context.Context, a *admission.Attributes, q corev1.ResourceQuota, usage corev1.ResourceList) error {
	check := func(q *corev1.ResourceQuota) error {
		requested := mask(usage, names(q.Status.Hard))
		if len(requested) == 0 {
			return nil
		}
		used := add(q.Status.Used, requested)
		if ok, exceeded := lessOrEqual(mask(used, names(requested)), q.Status.Hard); !ok {
			return admission.NewForbidden(a, fmt.Errorf("exceeded quota: %s, requested: %s, used: %s, limited: %s",
				q.Name, prettyPrint(mask(requested, exceeded)), prettyPrint(mask(q.Status.Used, exceeded)), prettyPrint(mask(q.Status.Hard, exceeded))))
		}
		q.Status.Used = used
		return nil
	}
	if a.DryRun {
		return check(q.DeepCopy())
	}
	return p.charge(ctx, a.Namespace, q.Name, check)
}

// matching returns the quota's hard names ev charges, nil when the quota
// does not apply to obj (none of them, or obj outside its scopes).
func matching(ev evaluator, q *corev1.ResourceQuota, obj runtime.Object) ([]corev1.ResourceName, error) {
	var restricted []corev1.ResourceName
	for _, n := range names(q.Status.Hard) {
		if ev.tracks(n) {
			restricted = append(restricted, n)
		}
	}
	if len(restricted) == 0 {
		return nil, nil
	}
	for _, sel := range scopeSelectors(q) {
		ok, err := ev.matchesScope(sel, obj)
		if err != nil {
			return nil, fmt.Errorf("error matching scopes of quota %s, err: %w", q.Name, err)
		}
		if !ok {
			return nil, nil
		}
	}
	return restricted, nil
}

// scopeSelectors are a quota's scopes and scope selector as requirements.
func scopeSelectors(q *corev1.ResourceQuota) []corev1.ScopedResourceSelectorRequirement {
	var out []corev1.ScopedResourceSelectorRequirement
	for _, s := range q.Spec.Scopes {
		out = append(out, corev1.ScopedResourceSelectorRequirement{ScopeName: s, Operator: corev1.ScopeSelectorOpExists})
	}
	if q.Spec.ScopeSelector != nil {
		out = append(out, q.Spec.ScopeSelector.MatchExpressions...)
	}
	return out
}
