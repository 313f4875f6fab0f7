package resourcequota

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"k8s.io/apimachinery/pkg/runtime"

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
	// MatchScopes: an object matching one of them is refused unless a quota
	// of its namespace has a scope of the same name that matches it.
	MatchScopes []corev1.ScopedResourceSelectorRequirement `json:"matchScopes,omitempty"`
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

// uncoveredScopes refuses an object that matches a limited scope (of any
// limited resource, as kube matches them) that no quota of the namespace
// matches it by a scope of the same name. kube answers with a plain error
// (a 500 with no reason, see admission.asStatus).
func (p *Plugin) uncoveredScopes(ev evaluator, quotas []corev1.ResourceQuota, obj runtime.Object) error {
	var limited []corev1.ScopedResourceSelectorRequirement
	for _, l := range p.limited {
		m, err := matchingScopes(ev, l.MatchScopes, obj)
		if err != nil {
			return nil // kube lets the write through when a limited scope cannot be matched
		}
		limited = append(limited, m...)
	}
	if len(limited) == 0 {
		return nil
	}
	covered := map[corev1.ResourceQuotaScope]bool{}
	for i := range quotas {
		m, err := matchingScopes(ev, scopeSelectors(&quotas[i]), obj)
		if err != nil {
			return fmt.Errorf("error matching scopes of quota %s, err: %v", quotas[i].Name, err)
		}
		for _, s := range m {
			covered[s.ScopeName] = true
		}
	}
	var uncovered []corev1.ScopedResourceSelectorRequirement
	for _, s := range limited {
		if !covered[s.ScopeName] {
			uncovered = append(uncovered, s)
		}
	}
	if len(uncovered) == 0 {
		return nil
	}
	return fmt.Errorf("insufficient quota to match these scopes: %v", uncovered)
}

// matchingScopes are the selectors obj matches.
func matchingScopes(ev evaluator, sels []corev1.ScopedResourceSelectorRequirement, obj runtime.Object) ([]corev1.ScopedResourceSelectorRequirement, error) {
	var out []corev1.ScopedResourceSelectorRequirement
	for _, sel := range sels {
		ok, err := ev.matchesScope(sel, obj)
		if err != nil {
			return nil, fmt.Errorf("error on matching scope %v: %v", sel, err)
		}
		if ok {
			out = append(out, sel)
		}
	}
	return out, nil
}
