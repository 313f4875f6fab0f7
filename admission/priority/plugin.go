// Package priority is kube's Priority admission plugin: it guards
// PriorityClasses (at most one may be the global default) and gives pods the
// priority of their class.
package priority

import (
	"context"
	"fmt"

	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/capstan-io/capstan/admission"
)

// Lister lists the priority classes.
type Lister func(ctx context.Context) ([]schedulingv1.PriorityClass, error)

// Plugin refuses a second global default priority class.
type Plugin struct {
	list Lister
}

// New returns the plugin reading priority classes with list.
func New(list Lister) *Plugin { return &Plugin{list: list} }

var (
	_ admission.Validator = (*Plugin)(nil)
	_ admission.Handles   = (*Plugin)(nil)
)

// Handles creates and updates.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Validate refuses to create a global default priority class, or to make
// one the default, while another is.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Resource.Group != schedulingv1.GroupName || a.Resource.Resource != "priorityclasses" || a.Subresource != "" {
		return nil
	}
	pc, ok := a.Object.(*schedulingv1.PriorityClass)
	if !ok {
		return apierrors.NewBadRequest("resource was marked with kind PriorityClass but was unable to be converted")
	}
	if !pc.GlobalDefault {
		return nil
	}
	def, err := p.defaultClass(ctx)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("failed to get default priority class: %w", err))
	}
	if def == nil || (a.Operation == admission.Update && def.Name == pc.Name) {
		return nil
	}
	return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name,
		fmt.Errorf("PriorityClass %v is already marked as default. Only one default can exist", def.Name))
}

// defaultClass is the global default class, the lowest valued one if a race
// made several.
func (p *Plugin) defaultClass(ctx context.Context) (*schedulingv1.PriorityClass, error) {
	classes, err := p.list(ctx)
	if err != nil {
		return nil, err
	}
	var def *schedulingv1.PriorityClass
	for i := range classes {
		if c := &classes[i]; c.GlobalDefault && (def == nil || c.Value < def.Value) {
			def = c
		}
	}
	return def, nil
}
