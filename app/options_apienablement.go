package app

import (
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"

	"github.com/capstan-io/capstan/endpoints"
)

// APIEnablementOptions is kube's "API enablement" section: --runtime-config.
type APIEnablementOptions struct {
	RuntimeConfig cliflag.ConfigurationMap
}

// AddFlags registers --runtime-config.
func (o *APIEnablementOptions) AddFlags(fs *pflag.FlagSet) {
	if o.RuntimeConfig == nil {
		o.RuntimeConfig = cliflag.ConfigurationMap{}
	}
	fs.Var(&o.RuntimeConfig, "runtime-config", "A set of key=value pairs that enable or disable built-in APIs. Supported options are:\n"+
		"v1=true|false for the core API group\n"+
		"<group>/<version>=true|false for a specific API group and version (e.g. apps/v1=true)\n"+
		"<group>/<version>/<resource>=true|false for a resource of a group version\n"+
		"api/all=true|false controls all API versions\n"+
		"api/ga=true|false controls all API versions of the form v[0-9]+\n"+
		"api/beta=true|false controls all API versions of the form v[0-9]+beta[0-9]+\n"+
		"api/alpha=true|false controls all API versions of the form v[0-9]+alpha[0-9]+\n"+
		"api/legacy is deprecated, and will be removed in a future version")
}

// Validate checks the keys' syntax as kube does; which group versions
// exist is checked when the server chain is built (APIEnablement).
func (o *APIEnablementOptions) Validate() error {
	_, err := o.enablement()
	return err
}

// enablement resolves --runtime-config into the servers' API enablement.
func (o *APIEnablementOptions) enablement() (*endpoints.APIEnablement, error) {
	e := &endpoints.APIEnablement{}
	if len(o.RuntimeConfig) == 1 && o.RuntimeConfig["api/all"] == "false" {
		return nil, errors.New("invalid runtime-config with only api/all=false")
	}
	keys := make([]string, 0, len(o.RuntimeConfig))
	for k := range o.RuntimeConfig {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		value := o.RuntimeConfig[key]
		on := true
		if endpoints.IsVersionClass(key) {
			// kube takes only these two values for a class of versions.
			if value != "true" && value != "false" {
				return nil, fmt.Errorf("invalid value %v=%v", key, value)
			}
			on = value == "true"
		} else if value != "" {
			b, err := strconv.ParseBool(value)
			if err != nil {
				return nil, fmt.Errorf("invalid value of %s: %s, err: %v", key, value, err)
			}
			on = b
		}
		if err := e.Set(key, on); err != nil {
			return nil, err
		}
	}
	return e, nil
}
