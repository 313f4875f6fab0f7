package resourcequota

import (
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/capstan-io/capstan/admission"
)

// Configuration is the plugin's ResourceQuotaConfiguration
// (apiserver.config.k8s.io/v1, or resourcequota.admission.k8s.io
// v1beta1/v1alpha1), read from the AdmissionConfiguration.
type Configuration struct {
	APIVersion       string            `json:"apiVersion"`
	Kind             string            `json:"kind"`
	LimitedResources []LimitedResource `json:"limitedResources"`
}

// LimitedResource is a resource that may only be consumed in a namespace
// whose quota covers it: an object of it whose usage names contain one of
// MatchContains is refused unless a quota charges that name.
type LimitedResource struct {
	APIGroup      string   `json:"apiGroup,omitempty"`
	Resource      string   `json:"resource"`
	MatchContains []string `json:"matchContains,omitempty"`
	MatchScopes   []any    `json:"matchScopes,omitempty"`
}

var configVersions = map[string]bool{
	"apiserver.config.k8s.io/v1": true, "resourcequota.admission.k8s.io/v1beta1": true, "resourcequota.admission.k8s.io/v1alpha1": true,
}

// ParseConfiguration reads the configuration (nil data: none).
func ParseConfiguration(data []byte) (*Configuration, error) {
	if data == nil {
		return nil, nil
	}
	var c Configuration
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, err
	}
	if c.Kind != "ResourceQuotaConfiguration" && c.Kind != "Configuration" || !configVersions[c.APIVersion] {
		return nil, fmt.Errorf("unexpected configuration %s, kind %q", c.APIVersion, c.Kind)
	}
	for _, l := range c.LimitedResources {
		if len(l.MatchScopes) > 0 {
			return nil, errors.New("limitedResources[].matchScopes is not implemented by capstan")
		}
	}
	return &c, nil
}

// limitedNames are the usage names of the object that the configuration
// limits to namespaces whose quota covers them.
func (p *Plugin) limitedNames(a *admission.Attributes, ev evaluator) []string {
	var out []string
	for _, l := range p.limited {
		if l.APIGroup != a.Resource.Group || l.Resource != a.Resource.Resource {
			continue
		}
		usage, err := ev.usage(a.Object)
		if err != nil {
			continue
		}
		for _, n := range names(usage) {
			for _, m := range l.MatchContains {
				if strings.Contains(string(n), m) {
					out = append(out, string(n))
					break
				}
			}
		}
	}
	return out
}
