// Package app is capstan's command: flags become Options, Options become a
// Config, the Config builds the server chain, and the chain runs.
package app

import (
	"errors"
	"path/filepath"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"

	"github.com/capstan-io/capstan/controlplane"
)

// Options are the command-line flags: kube-apiserver's, with its names,
// types, defaults and help sections, and capstan's own last. Each field is
// one of kube's sections.
type Options struct {
	Generic        GenericOptions
	Etcd           EtcdOptions
	SecureServing  ServingOptions
	Audit          AuditOptions
	Features       FeatureOptions
	Authentication AuthenticationOptions
	Authorization  AuthorizationOptions
	APIEnablement  APIEnablementOptions
	EgressSelector EgressSelectorOptions
	Admission      AdmissionOptions
	Metrics        MetricsOptions
	Logs           LogsOptions
	Traces         TracesOptions
	Misc           MiscOptions
	Global         GlobalOptions
	Capstan        CapstanOptions
	// Controllers is --controllers (in capstan's section): the in-process
	// control loops.
	Controllers ControllersOptions
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		Generic: NewGenericOptions(), Etcd: NewEtcdOptions(), SecureServing: NewServingOptions(), Audit: NewAuditOptions(),
		Features: NewFeatureOptions(), Authentication: NewAuthenticationOptions(), Authorization: NewAuthorizationOptions(),
		Logs: NewLogsOptions(), Misc: NewMiscOptions(), Capstan: NewCapstanOptions(),
		Controllers: NewControllersOptions(),
	}
}

// Flags returns the flags in kube-apiserver's help sections and order, then
// capstan's own.
func (o *Options) Flags() (fss cliflag.NamedFlagSets) {
	o.Generic.AddFlags(fss.FlagSet("generic"))
	o.Etcd.AddFlags(fss.FlagSet("etcd"))
	o.SecureServing.AddFlags(fss.FlagSet("secure serving"))
	o.Audit.AddFlags(fss.FlagSet("auditing"))
	o.Features.AddFlags(fss.FlagSet("features"))
	o.Authentication.AddFlags(fss.FlagSet("authentication"))
	o.Authorization.AddFlags(fss.FlagSet("authorization"))
	o.APIEnablement.AddFlags(fss.FlagSet("API enablement"))
	o.EgressSelector.AddFlags(fss.FlagSet("egress selector"))
	o.Admission.AddFlags(fss.FlagSet("admission"))
	o.Metrics.AddFlags(fss.FlagSet("metrics"))
	o.Logs.AddFlags(fss.FlagSet("logs"))
	o.Traces.AddFlags(fss.FlagSet("traces"))
	o.Misc.AddFlags(fss.FlagSet("misc"))
	o.Authentication.ServiceAccounts.AddMiscFlags(fss.FlagSet("misc"))
	o.Global.AddFlags(fss.FlagSet("global"))
	o.Capstan.AddFlags(fss.FlagSet("capstan"))
	o.Controllers.AddFlags(fss.FlagSet("capstan"))
	return fss
}

// AddFlags registers every flag on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fss := o.Flags()
	for _, name := range fss.Order {
		fs.AddFlagSet(fss.FlagSets[name])
	}
}

// Complete fills options derived from others, and the defaults kube
// resolves after parsing: the service IP range (10.0.0.0/24, as kube) and
// the service account issuer (kube requires the flag; capstan starts
// without it).
func (o *Options) Complete() {
	if o.SecureServing.CertDir == "" {
		o.SecureServing.CertDir = filepath.Join(o.Capstan.DataDir, "pki")
	}
	if o.Misc.Services.ClusterIPRanges == "" {
		o.Misc.Services.ClusterIPRanges = controlplane.DefaultServiceClusterIPRange
	}
	if len(o.Authentication.ServiceAccounts.Issuers) == 0 {
		o.Authentication.ServiceAccounts.Issuers = []string{controlplane.DefaultServiceAccountIssuer}
	}
}

// Validate reports every invalid option.
func (o *Options) Validate() error {
	return errors.Join(
		o.Generic.Validate(), o.Etcd.Validate(), o.SecureServing.Validate(), o.Audit.Validate(),
		o.Features.Validate(o.Generic), o.Authentication.Validate(), o.Authorization.Validate(),
		o.APIEnablement.Validate(), o.EgressSelector.Validate(), o.Admission.Validate(), o.Metrics.Validate(), o.Logs.Validate(),
		o.Traces.Validate(), o.Misc.Validate(), o.Capstan.Validate(), o.Controllers.Validate(),
	)
}

// kubeTyped shows a flag's value under the type name kube's help gives it
// (namedCertKey, Level, quantity ...), so that the help reads the same.
type kubeTyped struct {
	pflag.Value
	name string
}

func (k kubeTyped) Type() string { return k.name }

// showAs renames the type of the flag name of fs in the help.
func showAs(fs *pflag.FlagSet, name, typ string) {
	f := fs.Lookup(name)
	f.Value = kubeTyped{f.Value, typ}
}
