package plugins

import (
	"fmt"
	"log/slog"
	"slices"

	"github.com/capstan-io/capstan/admission"
)

// Factory builds one plugin from its configuration (nil when the
// AdmissionConfiguration has none for it). The plugin is an
// admission.Mutator, an admission.Validator or both; a nil plugin adds
// nothing to the chain.
type Factory func(config []byte) (any, error)

// Registry maps kube's plugin names to the factories of the plugins capstan
// implements.
type Registry struct {
	factories map[string]Factory
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{factories: map[string]Factory{}} }

// Register adds the plugin kube calls name. A name kube does not know, or
// one registered twice, is a programming error.
func (r *Registry) Register(name string, f Factory) {
	if !Known(name) {
		panic(fmt.Sprintf("admission plugin %q is not one of kube-apiserver's", name))
	}
	if _, ok := r.factories[name]; ok {
		panic(fmt.Sprintf("admission plugin %q registered twice", name))
	}
	r.factories[name] = f
}

// Implemented lists the registered plugins, in kube's order.
func (r *Registry) Implemented() []string {
	var names []string
	for _, n := range Ordered {
		if _, ok := r.factories[n]; ok {
			names = append(names, n)
		}
	}
	return names
}

// Chain builds the selected plugins in kube's order. A plugin a flag named
// that capstan does not implement fails the build, naming it; a default-on
// one is skipped (and logged), so that the defaults always start.
func (r *Registry) Chain(s Selection, logger *slog.Logger) (admission.Chain, error) {
	var chain admission.Chain
	for _, name := range s.Enabled {
		f, ok := r.factories[name]
		if !ok {
			if slices.Contains(s.Explicit, name) {
				return nil, fmt.Errorf("admission plugin %q is enabled but capstan does not implement it", name)
			}
			logger.Debug("default admission plugin not implemented, skipped", "plugin", name)
			continue
		}
		cfg, err := s.Config.For(name)
		if err != nil {
			return nil, err
		}
		p, err := f(cfg)
		if err != nil {
			return nil, fmt.Errorf("couldn't init admission plugin %q: %w", name, err)
		}
		if p != nil {
			chain = append(chain, admission.Named{Name: name, Plugin: p})
		}
	}
	return chain, nil
}
