// Package resourcequota is kube's ResourceQuota admission plugin: a write
// that would take a namespace's usage past a ResourceQuota's hard limits is
// refused, and an admitted one is charged to the quota's status.used
// before it is stored, inside an optimistic update of the quota, so that
// concurrent creates cannot together exceed it. Usage is kube's: object
// counts (count/<resource>.<group> and the legacy names), pods' compute
// resources, services' load balancers and node ports, claims' storage (per
// storage class too); scopes and scope selectors of pods.
package resourcequota

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
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

// Handles creates: usage that updates add (a claim growing, a pod resized)
// is left to the quota controller's recount.
func (*Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

// Validate checks the namespace's quotas and charges them.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Namespace == "" || a.Subresource != "" || a.Object == nil {
		return nil
	}
	quotas, err := p.list(ctx, a.Namespace)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("error looking up quotas: %w", err))
	}
	ev := evaluatorFor(a.Resource.GroupResource())
	limited := p.limitedNames(a, ev)
	if len(quotas) == 0 && len(limited) == 0 {
		return nil
	}
	usage, err := ev.usage(a.Object)
	if err != nil {
		return err
	}
	if len(removeZeros(usage)) == 0 {
		return nil
	}
	var charged []corev1.ResourceQuota
	covered := map[corev1.ResourceName]bool{}
	for _, q := range quotas {
		restricted, err := matching(ev, &q, a.Object)
		if err != nil || restricted == nil {
			if err != nil {
				return err
			}
			continue
		}
		if err := ev.constraints(restricted, a.Object); err != nil {
			return admission.NewForbidden(a, fmt.Errorf("failed quota: %s: %w", q.Name, err))
		}
		for _, n := range restricted {
			if _, ok := q.Status.Used[n]; !ok {
				return admission.NewForbidden(a, fmt.Errorf("status unknown for quota: %s, resources: %s", q.Name, prettyPrintNames(restricted)))
			}
			covered[n] = true
		}
		charged = append(charged, q)
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
	for _, q := range charged {
		if err := p.chargeOne(ctx, a, q, removeZeros(usage)); err != nil {
			return err
		}
	}
	return nil
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
