package app

import (
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/capstan-io/capstan/admission/plugins"
	"github.com/capstan-io/capstan/controlplane"
	"github.com/capstan-io/capstan/pki"
)

// AdmissionOptions are the admission flags, kube-apiserver's.
type AdmissionOptions struct {
	EnablePlugins  []string // --enable-admission-plugins
	DisablePlugins []string // --disable-admission-plugins
	ConfigFile     string   // --admission-control-config-file
	// PluginNames is the deprecated --admission-control: the whole set,
	// exclusive of the two above. nil when not given.
	PluginNames []string

	NotReadyTolerationSeconds    int64 // --default-not-ready-toleration-seconds
	UnreachableTolerationSeconds int64 // --default-unreachable-toleration-seconds
}

// defaultTolerationSeconds is kube's default of both toleration flags.
const defaultTolerationSeconds = 300

// AddFlags registers the admission flags.
func (o *AdmissionOptions) AddFlags(fs *pflag.FlagSet) {
	all := strings.Join(plugins.Ordered, ", ")
	defaults := strings.Join(plugins.DefaultEnabled(), ", ")
	fs.StringSliceVar(&o.EnablePlugins, "enable-admission-plugins", o.EnablePlugins, "admission plugins that should be enabled in addition to default enabled ones ("+
		defaults+"). Comma-delimited list of admission plugins: "+all+". The order of plugins in this flag does not matter.")
	fs.StringSliceVar(&o.DisablePlugins, "disable-admission-plugins", o.DisablePlugins, "admission plugins that should be disabled although they are in the default enabled plugins list ("+
		defaults+"). Comma-delimited list of admission plugins: "+all+". The order of plugins in this flag does not matter.")
	fs.StringVar(&o.ConfigFile, "admission-control-config-file", o.ConfigFile, "File with admission control configuration.")
	fs.StringSliceVar(&o.PluginNames, "admission-control", o.PluginNames, "Admission is divided into two phases. "+
		"In the first phase, only mutating admission plugins run. In the second phase, only validating admission plugins run. "+
		"The names in the below list may represent a validating plugin, a mutating plugin, or both. "+
		"The order of plugins in which they are passed to this flag does not matter. Comma-delimited list of: "+all+".")
	_ = fs.MarkDeprecated("admission-control", "Use --enable-admission-plugins or --disable-admission-plugins instead. Will be removed in a future version.")
	fs.Lookup("admission-control").Hidden = false
	fs.Int64Var(&o.NotReadyTolerationSeconds, "default-not-ready-toleration-seconds", defaultTolerationSeconds,
		"Indicates the tolerationSeconds of the toleration for notReady:NoExecute that is added by default to every pod that does not already have such a toleration.")
	fs.Int64Var(&o.UnreachableTolerationSeconds, "default-unreachable-toleration-seconds", defaultTolerationSeconds,
		"Indicates the tolerationSeconds of the toleration for unreachable:NoExecute that is added by default to every pod that does not already have such a toleration.")
}

// Validate refuses unknown plugin names and contradicting flags, with
// kube-apiserver's messages.
func (o *AdmissionOptions) Validate() error {
	return errors.Join(plugins.ValidateNames(o.EnablePlugins, o.DisablePlugins, o.PluginNames)...)
}

// config selects the plugins and reads the configuration file.
func (o *AdmissionOptions) config() (controlplane.AdmissionConfig, error) {
	sel := plugins.Select(o.EnablePlugins, o.DisablePlugins, o.PluginNames)
	cfg, err := plugins.ReadConfig(o.ConfigFile, sel.Enabled)
	if err != nil {
		return controlplane.AdmissionConfig{}, fmt.Errorf("failed to read plugin config: %w", err)
	}
	sel.Config = cfg
	return controlplane.AdmissionConfig{
		Plugins:                   sel,
		NotReadyTolerationSeconds: o.NotReadyTolerationSeconds, UnreachableTolerationSeconds: o.UnreachableTolerationSeconds,
	}, nil
}

// rootCA is the CA pods verify the server with (each namespace's
// kube-root-ca.crt): capstan's CA when it made the serving certificate,
// else the last certificate of --tls-cert-file's chain, the nearest to a
// root that capstan knows.
func rootCA(certs pki.ServingCerts) ([]byte, error) {
	if len(certs.CAPEM) > 0 {
		return certs.CAPEM, nil
	}
	data, err := os.ReadFile(certs.CertFile)
	if err != nil {
		return nil, fmt.Errorf("root CA: %w", err)
	}
	var last *pem.Block
	for {
		var b *pem.Block
		if b, data = pem.Decode(data); b == nil {
			break
		}
		if b.Type == "CERTIFICATE" {
			last = b
		}
	}
	if last == nil {
		return nil, fmt.Errorf("root CA: no certificate in %s", certs.CertFile)
	}
	return pem.EncodeToMemory(last), nil
}
