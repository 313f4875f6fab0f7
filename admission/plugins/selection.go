package plugins

import (
	"fmt"
	"slices"
)

// Selection is the plugins the flags turn on and their configuration.
type Selection struct {
	// Enabled are the plugins to run, in Ordered's order.
	Enabled []string
	// Explicit are the plugins a flag named to be on: capstan refuses to
	// start when one of them is a plugin it does not implement, and skips
	// the default-on ones it does not implement.
	Explicit []string
	// Config is the --admission-control-config-file; nil when none.
	Config *Config
}

// Select turns the flags into the enabled plugins, as kube-apiserver does:
// kube's default-on set, plus enable, minus disable, in kube's order. A
// non-nil admissionControl (the deprecated --admission-control) is the
// whole set instead.
func Select(enable, disable, admissionControl []string) Selection {
	if admissionControl != nil {
		enable = admissionControl
		disable = nil
		for _, n := range Ordered {
			if !slices.Contains(admissionControl, n) {
				disable = append(disable, n)
			}
		}
	}
	var s Selection
	for _, n := range Ordered {
		on := slices.Contains(enable, n) || (defaultOn[n] && !slices.Contains(disable, n))
		if on {
			s.Enabled = append(s.Enabled, n)
		}
		if slices.Contains(enable, n) {
			s.Explicit = append(s.Explicit, n)
		}
	}
	return s
}

// ValidateNames checks the three flags as kube-apiserver does, with its
// messages: the deprecated flag excludes the others, every name is known,
// and no name is both enabled and disabled.
func ValidateNames(enable, disable, admissionControl []string) []error {
	var errs []error
	if admissionControl != nil && (enable != nil || disable != nil) {
		errs = append(errs, fmt.Errorf("admission-control and enable-admission-plugins/disable-admission-plugins flags are mutually exclusive"))
	}
	for _, flag := range []struct {
		name  string
		names []string
	}{{"admission-control", admissionControl}, {"enable-admission-plugins", enable}, {"disable-admission-plugins", disable}} {
		for _, n := range flag.names {
			if !Known(n) {
				errs = append(errs, fmt.Errorf("%s plugin %q is unknown", flag.name, n))
			}
		}
	}
	var both []string
	for _, n := range enable {
		if slices.Contains(disable, n) && !slices.Contains(both, n) {
			both = append(both, n)
		}
	}
	if len(both) > 0 {
		slices.Sort(both)
		errs = append(errs, fmt.Errorf("%v in enable-admission-plugins and disable-admission-plugins overlapped", both))
	}
	return errs
}
