package app

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/capstan-io/capstan/controlplane"
)

// ControllersOptions is --controllers: which of the control loops that kube
// leaves to kube-controller-manager capstan runs in-process, in
// kube-controller-manager's syntax.
type ControllersOptions struct {
	Controllers []string
}

// NewControllersOptions runs every in-process loop, as
// kube-controller-manager's default "*" runs every loop on by default.
func NewControllersOptions() ControllersOptions {
	return ControllersOptions{Controllers: []string{"*"}}
}

// AddFlags registers --controllers.
func (o *ControllersOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.Controllers, "controllers", o.Controllers, "A list of the control loops capstan runs in-process, in kube-controller-manager's syntax: "+
		"'*' enables all, 'foo' enables the controller named 'foo', '-foo' disables it; the first entry naming a controller decides. "+
		"An empty list (--controllers=) runs none, as kube-apiserver alone. In-process controllers: "+strings.Join(inProcessNames(), ", ")+
		". The names and aliases of kube-controller-manager's other controllers may be disabled (it runs them, capstan does not).")
}

// Validate refuses names kube-controller-manager does not know, as it
// refuses them, and the enabling of a controller capstan does not run.
func (o *ControllersOptions) Validate() error {
	var errs []error
	for _, entry := range o.Controllers {
		if entry == "*" {
			continue
		}
		name, disable := strings.CutPrefix(entry, "-")
		canonical, ok := canonicalController(name)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("--controllers: %q is not in the list of known controllers", name))
		case !disable && controlplane.InProcessControllers[canonical] == nil:
			errs = append(errs, fmt.Errorf("--controllers: capstan does not run %q in-process; run kube-controller-manager beside capstan for it", name))
		}
	}
	return errors.Join(errs...)
}

// disabled resolves the list into the loops not to run, by
// kube-controller-manager's rule: an entry naming the controller (by name
// or alias) decides, the first one that does; otherwise "*" enables it;
// otherwise it is off.
func (o *ControllersOptions) disabled() controlplane.DisabledControllers {
	d := controlplane.DisabledControllers{}
	for name := range controlplane.InProcessControllers {
		if !controllerEnabled(name, o.Controllers) {
			d[name] = true
		}
	}
	return d
}

func controllerEnabled(name string, entries []string) bool {
	star := false
	for _, entry := range entries {
		if entry == "*" {
			star = true
			continue
		}
		n, disable := strings.CutPrefix(entry, "-")
		if c, _ := canonicalController(n); c == name {
			return !disable
		}
	}
	return star
}

// canonicalController maps a kube-controller-manager name or alias to its
// name.
func canonicalController(name string) (string, bool) {
	if _, ok := kubeControllerManagerControllers[name]; ok {
		return name, true
	}
	for canonical, aliases := range kubeControllerManagerControllers {
		if slices.Contains(aliases, name) {
			return canonical, true
		}
	}
	return "", false
}

func inProcessNames() []string {
	var names []string
	for name, aliases := range controlplane.InProcessControllers {
		names = append(names, name+" ("+strings.Join(aliases, ", ")+")")
	}
	sort.Strings(names)
	return names
}
