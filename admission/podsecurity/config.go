package podsecurity

import (
	"fmt"
	"slices"

	"k8s.io/pod-security-admission/api"
	"sigs.k8s.io/yaml"
)

// Configuration is the plugin's PodSecurityConfiguration
// (pod-security.admission.config.k8s.io v1, v1beta1, v1alpha1) in the
// AdmissionConfiguration: the levels of namespaces without labels, and who
// and what is exempt.
type Configuration struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Defaults   Defaults   `json:"defaults"`
	Exemptions Exemptions `json:"exemptions"`
}

// Defaults are the levels and versions of a namespace that has no labels.
type Defaults struct {
	Enforce        string `json:"enforce"`
	EnforceVersion string `json:"enforce-version"`
	Audit          string `json:"audit"`
	AuditVersion   string `json:"audit-version"`
	Warn           string `json:"warn"`
	WarnVersion    string `json:"warn-version"`
}

// Exemptions are never checked.
type Exemptions struct {
	Usernames      []string `json:"usernames"`
	RuntimeClasses []string `json:"runtimeClasses"`
	Namespaces     []string `json:"namespaces"`
}

var configVersions = []string{
	"pod-security.admission.config.k8s.io/v1", "pod-security.admission.config.k8s.io/v1beta1", "pod-security.admission.config.k8s.io/v1alpha1",
}

// ParseConfiguration reads the configuration; nil data is kube's default
// (everything privileged, latest versions, no exemptions).
func ParseConfiguration(data []byte) (*Configuration, api.Policy, error) {
	c := &Configuration{}
	if data != nil {
		if err := yaml.UnmarshalStrict(data, c); err != nil {
			return nil, api.Policy{}, err
		}
		if c.Kind != "PodSecurityConfiguration" || !slices.Contains(configVersions, c.APIVersion) {
			return nil, api.Policy{}, fmt.Errorf("unexpected configuration %s, kind %q", c.APIVersion, c.Kind)
		}
	}
	var p api.Policy
	var err error
	for _, lv := range []struct {
		dst            *api.LevelVersion
		level, version string
	}{
		{&p.Enforce, c.Defaults.Enforce, c.Defaults.EnforceVersion},
		{&p.Audit, c.Defaults.Audit, c.Defaults.AuditVersion},
		{&p.Warn, c.Defaults.Warn, c.Defaults.WarnVersion},
	} {
		if lv.level == "" {
			lv.level = string(api.LevelPrivileged)
		}
		if lv.version == "" {
			lv.version = "latest"
		}
		if lv.dst.Level, err = api.ParseLevel(lv.level); err != nil {
			return nil, api.Policy{}, err
		}
		if lv.dst.Version, err = api.ParseVersion(lv.version); err != nil {
			return nil, api.Policy{}, err
		}
	}
	return c, p, nil
}
