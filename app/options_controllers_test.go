package app

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/capstan-io/capstan/controlplane"
)

func TestControllers(t *testing.T) {
	all := []string{controlplane.NamespaceController, controlplane.GarbageCollectorController, controlplane.ClusterRoleAggregationController,
		controlplane.ServiceAccountController, controlplane.RootCACertPublisherController, controlplane.ResourceQuotaController}
	for _, tc := range []struct {
		flag     []string
		disabled []string
		err      string
	}{
		{flag: []string{"*"}},
		{flag: []string{}, disabled: all},
		{flag: []string{"-garbagecollector", "*"}, disabled: []string{controlplane.GarbageCollectorController}},
		{flag: []string{"*", "-namespace-controller", "-clusterrole-aggregation"}, disabled: []string{controlplane.NamespaceController, controlplane.ClusterRoleAggregationController}},
		{flag: []string{"namespace"}, disabled: all[1:]},
		{flag: []string{"namespace", "-namespace", "*"}, disabled: nil},
		{flag: []string{"-namespace", "namespace", "*"}, disabled: []string{controlplane.NamespaceController}},
		// kube-controller-manager's other loops may be turned off.
		{flag: []string{"*", "-bootstrapsigner", "-deployment-controller"}},
		{flag: []string{"*", "tokencleaner"}, err: `capstan does not run "tokencleaner" in-process`},
		{flag: []string{"*", "-nope"}, err: `"nope" is not in the list of known controllers`},
		{flag: []string{"-*"}, err: `"*" is not in the list of known controllers`},
	} {
		o := ControllersOptions{Controllers: tc.flag}
		err := o.Validate()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: error %v, want %q", tc.flag, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.flag, err)
			continue
		}
		d := o.disabled()
		for _, name := range all {
			want := !contains(tc.disabled, name)
			if d.Runs(name) != want {
				t.Errorf("%v: %s runs %v, want %v", tc.flag, name, d.Runs(name), want)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestLeaderElectFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{args: nil},
		{args: []string{"--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=1s"}},
		{args: []string{"--leader-elect-lease-duration=10s"}, err: "--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline"},
		{args: []string{"--leader-elect-retry-period=9s"}, err: "--leader-elect-renew-deadline must be greater than --leader-elect-retry-period*1.2"},
		{args: []string{"--leader-elect-retry-period=0"}, err: "--leader-elect-retry-period must be positive"},
		// Without election the timings are not used.
		{args: []string{"--leader-elect=false", "--leader-elect-lease-duration=1s"}},
	} {
		o := NewControllersOptions()
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := o.Validate()
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.err)
		}
	}
}
