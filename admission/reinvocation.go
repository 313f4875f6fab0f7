package admission

import (
	"bytes"
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime"
)

// Reinvocation is kube's reinvocation of the mutating chain: when a
// webhook or policy changes the object after one whose
// reinvocationPolicy is IfNeeded ran, the whole mutating chain runs once
// more; the built-in plugins all run again, and of the webhooks and
// policies only those IfNeeded ones. A write's admission runs on one
// goroutine, so there is no lock.
type Reinvocation struct {
	again   bool // this is the second run
	wanted  bool // a second run is wanted
	plugins map[string]*PluginReinvocation
}

// IsReinvoke reports whether this is the chain's second run.
func (r *Reinvocation) IsReinvoke() bool { return r.again }

// RequestReinvoke asks for a second run of the chain (kube's
// SetShouldReinvoke); on the second run it does nothing.
func (r *Reinvocation) RequestReinvoke() { r.wanted = true }

// Plugin is the state one plugin keeps between the runs.
func (r *Reinvocation) Plugin(name string) *PluginReinvocation {
	if r.plugins == nil {
		r.plugins = map[string]*PluginReinvocation{}
	}
	p := r.plugins[name]
	if p == nil {
		p = &PluginReinvocation{previous: map[string]bool{}, reinvoke: map[string]bool{}}
		r.plugins[name] = p
	}
	return p
}

// PluginReinvocation is one plugin's webhooks or policies: which ran with
// IfNeeded, which are due to run again, and the object as the plugin last
// left it.
type PluginReinvocation struct {
	previous map[string]bool // IfNeeded items that ran since the last change
	reinvoke map[string]bool // items due on the second run
	output   []byte          // the object's JSON when the plugin last returned
}

// Invoked records that the IfNeeded item key ran.
func (p *PluginReinvocation) Invoked(key string) { p.previous[key] = true }

// Changed records that the object changed: every IfNeeded item that ran
// before is due on the second run.
func (p *PluginReinvocation) Changed() {
	for k := range p.previous {
		p.reinvoke[k] = true
	}
	clear(p.previous)
}

// Due reports whether item key runs on the second run.
func (p *PluginReinvocation) Due(key string) bool { return p.reinvoke[key] }

// SetOutput records obj as the plugin leaves it.
func (p *PluginReinvocation) SetOutput(obj runtime.Object) {
	p.output = encodeOrNil(obj)
}

// OutputChanged reports whether obj changed since the plugin last left it
// (other plugins changed it in between).
func (p *PluginReinvocation) OutputChanged(obj runtime.Object) bool {
	return !bytes.Equal(p.output, encodeOrNil(obj))
}

func encodeOrNil(obj runtime.Object) []byte {
	if obj == nil {
		return nil
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return nil
	}
	return data
}

// Begin is the start of one plugin's run on a: the plugin's state, and
// whether this is the second run. On the second run, an object changed
// by the plugins in between makes every IfNeeded item due.
func (a *Attributes) Begin(plugin string) (*PluginReinvocation, bool) {
	if a.Reinvocation == nil {
		a.Reinvocation = &Reinvocation{}
	}
	p := a.Reinvocation.Plugin(plugin)
	again := a.Reinvocation.IsReinvoke()
	if again && p.OutputChanged(a.Object) {
		p.Changed()
	}
	return p, again
}
