package app

import (
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"github.com/capstan-io/capstan/metrics"
)

// kubeVersion is the minor version capstan serves and emulates.
const kubeVersion = "1.37"

// VersionOptions are --emulated-version, --min-compatibility-version,
// --feature-gates and the emulation forward compatibility switches.
// capstan serves one version, kube's 1.37, so emulation of another is
// refused; a gate may be set to its default, or away from it where
// capstan implements what the gate changes (honouredGates).
type VersionOptions struct {
	EmulatedVersion                         []string
	MinCompatibilityVersion                 []string
	FeatureGates                            featureGates
	EmulationForwardCompatible              bool
	RuntimeConfigEmulationForwardCompatible bool
}

// AddFlags registers the flags; kube puts them in its generic section.
func (o *VersionOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.EmulatedVersion, "emulated-version", o.EmulatedVersion, "The versions different components emulate their capabilities (APIs, features, ...) of. "+
		"Version format could only be major.minor, for example: '--emulated-version=kube=1.37'. capstan serves kube "+kubeVersion+" and emulates no other.")
	fs.StringSliceVar(&o.MinCompatibilityVersion, "min-compatibility-version", o.MinCompatibilityVersion, "The lowest version of each component the control plane stays compatible with "+
		"(CEL features and libraries). Must be less or equal to the emulated version. Format major.minor, for example '--min-compatibility-version=kube=1.36'.")
	fs.Var(&o.FeatureGates, "feature-gates", "Comma-separated list of component:key=value pairs that describe feature gates for alpha/experimental features of different components.\n"+
		"If the component is not specified, defaults to \"kube\". Options are kube-apiserver "+kubeVersion+"'s gates; capstan refuses a value it does not implement.")
	fs.BoolVar(&o.EmulationForwardCompatible, "emulation-forward-compatible", o.EmulationForwardCompatible, "If true, beta+ APIs enabled at the emulation version "+
		"also enable their newer versions. Only with an emulation version lower than the binary version.")
	fs.BoolVar(&o.RuntimeConfigEmulationForwardCompatible, "runtime-config-emulation-forward-compatible", o.RuntimeConfigEmulationForwardCompatible, "If true, group versions "+
		"that --runtime-config enables are installed even if introduced after the emulation version. Only with an emulation version lower than the binary version.")
}

// Validate reports kube's errors, and capstan's for what it cannot emulate.
func (o *VersionOptions) Validate() error {
	var errs []error
	for _, v := range o.EmulatedVersion {
		if err := checkComponentVersion("--emulated-version", v); err != nil {
			errs = append(errs, err)
		}
	}
	for _, v := range o.MinCompatibilityVersion {
		if err := checkMinCompatibility(v); err != nil {
			errs = append(errs, err)
		}
	}
	if o.EmulationForwardCompatible {
		errs = append(errs, errors.New("ServerRunOptions.EmulationForwardCompatible cannot be set to true if the emulation version is the same as the binary version"))
	}
	if o.RuntimeConfigEmulationForwardCompatible {
		errs = append(errs, errors.New("ServerRunOptions.RuntimeConfigEmulationForwardCompatible cannot be set to true if the emulation version is the same as the binary version"))
	}
	errs = append(errs, o.FeatureGates.validate())
	return errors.Join(errs...)
}

// componentVersion splits "kube=1.36" or "1.36" into component and version.
func componentVersion(flag, v string) (component, version string, err error) {
	component, version = "kube", v
	if c, rest, ok := strings.Cut(v, "="); ok {
		component, version = c, rest
	}
	if component != "kube" {
		return "", "", fmt.Errorf("%s: component not registered: %s", flag, component)
	}
	major, minor, ok := strings.Cut(version, ".")
	if _, err := strconv.ParseUint(major, 10, 32); err != nil || !ok {
		return "", "", fmt.Errorf("%s: illegal version string %q", flag, version)
	}
	if _, err := strconv.ParseUint(minor, 10, 32); err != nil {
		return "", "", fmt.Errorf("%s: illegal version string %q", flag, version)
	}
	return component, version, nil
}

func checkComponentVersion(flag, v string) error {
	_, version, err := componentVersion(flag, v)
	if err != nil || version == kubeVersion {
		return err
	}
	return fmt.Errorf("%s=%s: capstan serves kube %s and cannot emulate another version", flag, v, kubeVersion)
}

// checkMinCompatibility allows any version up to the one served: capstan
// turns on no CEL feature newer than 1.37's, so every such floor holds.
func checkMinCompatibility(v string) error {
	_, version, err := componentVersion("--min-compatibility-version", v)
	if err != nil {
		return err
	}
	if compareMinor(version, kubeVersion) > 0 {
		return fmt.Errorf("--min-compatibility-version=%s: emulation version %s is not between [1.34, %s]", v, kubeVersion, kubeVersion)
	}
	return nil
}

func compareMinor(a, b string) int {
	parse := func(s string) (int, int) {
		maj, min, _ := strings.Cut(s, ".")
		x, _ := strconv.Atoi(maj)
		y, _ := strconv.Atoi(min)
		return x, y
	}
	am, an := parse(a)
	bm, bn := parse(b)
	if am != bm {
		return am - bm
	}
	return an - bn
}

// featureGates is the value of --feature-gates: "[kube:]Name=bool,...".
type featureGates struct {
	set   map[string]bool
	order []string
	err   error
}

func (f *featureGates) String() string {
	var parts []string
	for _, k := range f.order {
		parts = append(parts, fmt.Sprintf("%s=%t", k, f.set[k]))
	}
	return strings.Join(parts, ",")
}

func (f *featureGates) Type() string { return "colonSeparatedMultimapStringString" }

// Set parses one occurrence of the flag; later occurrences add to it.
func (f *featureGates) Set(value string) error {
	if f.set == nil {
		f.set = map[string]bool{}
	}
	for _, pair := range strings.Split(value, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		if c, rest, ok := strings.Cut(pair, ":"); ok && !strings.Contains(c, "=") {
			if c != "kube" {
				return fmt.Errorf("component not registered: %s", c)
			}
			pair = rest
		}
		k, v, ok := strings.Cut(pair, "=")
		if !ok {
			return fmt.Errorf("malformed pair, expect string=string")
		}
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("invalid value of %s=%s, err: %v", k, v, err)
		}
		k = strings.TrimSpace(k)
		if _, seen := f.set[k]; !seen {
			f.order = append(f.order, k)
		}
		f.set[k] = b
	}
	return nil
}

// Enabled is the gate's value: as set, else kube's default.
func (f *featureGates) Enabled(name string) bool {
	if v, ok := f.set[name]; ok {
		return v
	}
	return kubeFeatureGates()[name].def
}

// recordMetrics sets kubernetes_feature_enabled for every gate kube
// knows, as kube-apiserver does at start.
func (f *featureGates) recordMetrics() {
	for name, spec := range kubeFeatureGates() {
		stage := spec.stage
		if stage == "GA" { // kube's GA stage is the empty string
			stage = ""
		}
		metrics.FeatureGate(name, stage, f.Enabled(name))
	}
}

// honouredGates are the gates whose non-default value capstan implements.
var honouredGates = []string{"StatefulSetRecreateStrategy"}

func (f *featureGates) validate() error {
	gates := kubeFeatureGates()
	var errs []error
	for _, k := range f.order {
		v := f.set[k]
		spec, ok := gates[k]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("unrecognized feature gate: %s", k))
		case spec.locked && v != spec.def:
			errs = append(errs, fmt.Errorf("cannot set feature gate %v to %v, feature is locked to %v", k, v, spec.def))
		case v != spec.def && !slices.Contains(honouredGates, k):
			errs = append(errs, fmt.Errorf("--feature-gates=%s=%t: capstan does not implement this gate's behaviour; it runs with kube's default (%t)", k, v, spec.def))
		}
	}
	return errors.Join(errs...)
}

// kubeGatesTSV is kube-apiserver v1.37.2's gates, recorded by
// hack/update-kube-flags.sh: name, default, locked, stage.
//
//go:embed kube/featuregates.tsv
var kubeGatesTSV string

type gateSpec struct {
	def, locked bool
	stage       string
}

var kubeFeatureGates = sync.OnceValue(func() map[string]gateSpec {
	gates := map[string]gateSpec{}
	for _, line := range strings.Split(strings.TrimSpace(kubeGatesTSV), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 || strings.HasPrefix(line, "#") {
			continue
		}
		gates[f[0]] = gateSpec{def: f[1] == "true", locked: f[2] == "true", stage: f[3]}
	}
	return gates
})
