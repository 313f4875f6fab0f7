package app

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/leaderelection"

	"github.com/capstan-io/capstan/controlplane"
	"github.com/capstan-io/capstan/controlplane/controllers/elected"
)

// ControllersOptions is --controllers: which of the control loops that kube
// leaves to kube-controller-manager capstan runs in-process, in
// kube-controller-manager's syntax.
type ControllersOptions struct {
	Controllers []string
	// LeaderElect and the durations are kube-controller-manager's
	// --leader-elect flags: the loops run on the replica holding a lease.
	LeaderElect                               bool
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// NewControllersOptions runs every in-process loop, as
// kube-controller-manager's default "*" runs every loop on by default,
// under kube-controller-manager's leader election.
func NewControllersOptions() ControllersOptions {
	return ControllersOptions{Controllers: []string{"*"}, LeaderElect: true,
		LeaseDuration: elected.DefaultLeaseDuration, RenewDeadline: elected.DefaultRenewDeadline, RetryPeriod: elected.DefaultRetryPeriod}
}

// AddFlags registers --controllers.
func (o *ControllersOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.Controllers, "controllers", o.Controllers, "A list of the control loops capstan runs in-process, in kube-controller-manager's syntax: "+
		"'*' enables all, 'foo' enables the controller named 'foo', '-foo' disables it; the first entry naming a controller decides. "+
		"An empty list (--controllers=) runs none, as kube-apiserver alone. In-process controllers: "+strings.Join(inProcessNames(), ", ")+
		". The names and aliases of kube-controller-manager's other controllers may be disabled (it runs them, capstan does not).")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Run the in-process control loops only on the replica holding the kube-system/"+
		controlplane.ControllersLease+" Lease, as kube-controller-manager's --leader-elect: each loop runs once among several replicas. "+
		"Identity leases and the kubernetes Service's endpoints are kept by every replica.")
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", o.LeaseDuration, "How long replicas that do not lead wait, "+
		"after the leader's last renewal, before taking its place.")
	fs.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", o.RenewDeadline, "How long the leader tries to renew its lease before "+
		"it stops its loops. Less than or equal to the lease duration.")
	fs.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", o.RetryPeriod, "How long replicas wait between attempts to acquire or renew the lease.")
}

// Validate refuses names kube-controller-manager does not know, as it
// refuses them, and the enabling of a controller capstan does not run.
func (o *ControllersOptions) Validate() error {
	var errs []error
	if o.LeaderElect {
		errs = append(errs, o.validateElection())
	}
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

// validateElection refuses the timings client-go's leader election
// refuses, in its words.
func (o *ControllersOptions) validateElection() error {
	switch {
	case o.LeaseDuration <= o.RenewDeadline:
		return errors.New("--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline")
	case float64(o.RenewDeadline) <= leaderelection.JitterFactor*float64(o.RetryPeriod):
		return fmt.Errorf("--leader-elect-renew-deadline must be greater than --leader-elect-retry-period*%.1f", leaderelection.JitterFactor)
	case o.RetryPeriod < time.Millisecond:
		return errors.New("--leader-elect-retry-period must be positive")
	}
	return nil
}

// ha is this replica's identity and election settings.
func (o *ControllersOptions) ha() (controlplane.HAConfig, error) {
	host, err := os.Hostname()
	if err != nil {
		return controlplane.HAConfig{}, fmt.Errorf("host name for the apiserver identity lease: %w", err)
	}
	return controlplane.HAConfig{Hostname: host, NoLeaderElection: !o.LeaderElect,
		LeaseDuration: o.LeaseDuration, RenewDeadline: o.RenewDeadline, RetryPeriod: o.RetryPeriod}, nil
}
