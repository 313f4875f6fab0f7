package plugins

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apiserver/pkg/apis/apiserver"
	apiserverv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
	apiserverv1alpha1 "k8s.io/apiserver/pkg/apis/apiserver/v1alpha1"
	"sigs.k8s.io/yaml"
)

// Config is an AdmissionConfiguration file (--admission-control-config-file):
// each plugin's own configuration, by plugin name. The zero Config, and a
// nil one, configure nothing.
type Config struct {
	plugins []apiserver.AdmissionPluginConfiguration
}

// The versions kube-apiserver reads the file in: apiserver.config.k8s.io/v1
// and apiserver.k8s.io/v1alpha1, strictly (unknown and duplicate fields are errors).
var configCodecs = func() serializer.CodecFactory {
	s := runtime.NewScheme()
	utilruntime.Must(apiserver.AddToScheme(s))
	utilruntime.Must(apiserverv1alpha1.AddToScheme(s))
	utilruntime.Must(apiserverv1.AddToScheme(s))
	return serializer.NewCodecFactory(s, serializer.EnableStrict)
}()

// legacyPlugins read, before AdmissionConfiguration existed, a file of
// their own given as the whole --admission-control-config-file; kube still
// accepts such a file for them.
var legacyPlugins = map[string]string{"imagePolicy": "ImagePolicyWebhook", "podNodeSelectorPluginConfig": "PodNodeSelector"}

// ReadConfig reads an AdmissionConfiguration file as kube-apiserver does: a
// plugin's path is relative to the file's directory; a file that is not an
// AdmissionConfiguration but one of the legacy ImagePolicyWebhook or
// PodNodeSelector files configures those of enabled that read it. An empty
// path is no configuration.
func ReadConfig(path string, enabled []string) (*Config, error) {
	if path == "" {
		return &Config{}, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("unable to read admission control configuration from %q [%w]", path, err)
	}
	obj, err := runtime.Decode(configCodecs.UniversalDecoder(), data)
	if err == nil {
		ac, ok := obj.(*apiserver.AdmissionConfiguration)
		if !ok {
			return nil, fmt.Errorf("unexpected type: %T", obj)
		}
		c := &Config{plugins: ac.Plugins}
		for i := range c.plugins {
			if p := c.plugins[i].Path; p != "" && !filepath.IsAbs(p) {
				abs, err := filepath.Abs(filepath.Join(filepath.Dir(path), p))
				if err != nil {
					return nil, err
				}
				c.plugins[i].Path = abs
			}
		}
		return c, nil
	}
	if !runtime.IsMissingVersion(err) && !runtime.IsMissingKind(err) && !runtime.IsNotRegisteredError(err) {
		return nil, err
	}
	return legacyConfig(path, data, enabled, err)
}

// legacyConfig points the legacy plugins among enabled at the whole file,
// when the file has one of their top-level keys; otherwise decodeErr stands.
func legacyConfig(path string, data []byte, enabled []string, decodeErr error) (*Config, error) {
	var top map[string]any
	if yaml.Unmarshal(data, &top) != nil {
		return nil, decodeErr
	}
	legacy := false
	for key := range legacyPlugins {
		_, ok := top[key]
		legacy = legacy || ok
	}
	if !legacy {
		return nil, decodeErr
	}
	c := &Config{}
	for _, name := range enabled {
		if name == "ImagePolicyWebhook" || name == "PodNodeSelector" {
			c.plugins = append(c.plugins, apiserver.AdmissionPluginConfiguration{Name: name, Path: path})
		}
	}
	return c, nil
}

// For returns the configuration of the named plugin, inline or read from
// its path, as JSON (an inline configuration) or as the file holds it (a
// path: JSON or YAML). nil when the file does not configure the plugin.
func (c *Config) For(name string) ([]byte, error) {
	if c == nil {
		return nil, nil
	}
	for _, p := range c.plugins {
		if p.Name != name {
			continue
		}
		if p.Configuration != nil {
			return p.Configuration.Raw, nil
		}
		if p.Path == "" {
			return nil, nil
		}
		data, err := os.ReadFile(p.Path)
		if err != nil {
			return nil, fmt.Errorf("couldn't open admission plugin configuration %s: %w", p.Path, err)
		}
		return data, nil
	}
	return nil, nil
}
