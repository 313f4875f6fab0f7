package imagepolicy

import (
	"fmt"
	"time"

	"sigs.k8s.io/yaml"
)

// config is the plugin's file: {imagePolicy: {...}}. The durations are
// numbers: seconds for the TTLs, milliseconds for the backoff; 0 is kube's
// default, -1 turns the cache (or the wait) off.
type config struct {
	ImagePolicy webhookConfig `json:"imagePolicy"`
}

type webhookConfig struct {
	KubeConfigFile string        `json:"kubeConfigFile"`
	AllowTTL       time.Duration `json:"allowTTL"`
	DenyTTL        time.Duration `json:"denyTTL"`
	RetryBackoff   time.Duration `json:"retryBackoff"`
	DefaultAllow   bool          `json:"defaultAllow"`
}

// kube's bounds and defaults.
var (
	backoffBounds = bounds{"backoff", time.Millisecond, 1, 5 * time.Minute, 500 * time.Millisecond}
	allowBounds   = bounds{"allow cache", time.Second, time.Second, 30 * time.Minute, 5 * time.Minute}
	denyBounds    = bounds{"deny cache", time.Second, time.Second, 30 * time.Minute, 30 * time.Second}
)

type bounds struct {
	name          string
	scale         time.Duration
	min, max, def time.Duration
}

// normalize scales a configured duration, as kube does.
func (b bounds) normalize(v time.Duration) (time.Duration, error) {
	switch v {
	case -1:
		return 0, nil
	case 0:
		return b.def, nil
	}
	v *= b.scale
	if v < b.min || v > b.max {
		return v, fmt.Errorf("valid value is between %v and %v, got %v", b.min, b.max, v)
	}
	return v, nil
}

// readConfig decodes the plugin's file and normalizes its durations.
func readConfig(data []byte) (webhookConfig, error) {
	if len(data) == 0 {
		return webhookConfig{}, fmt.Errorf("no config specified")
	}
	var c config
	if err := yaml.Unmarshal(data, &c); err != nil {
		return webhookConfig{}, err
	}
	w := c.ImagePolicy
	var err error
	if w.RetryBackoff, err = backoffBounds.normalize(w.RetryBackoff); err != nil {
		return w, err
	}
	if w.AllowTTL, err = allowBounds.normalize(w.AllowTTL); err != nil {
		return w, err
	}
	w.DenyTTL, err = denyBounds.normalize(w.DenyTTL)
	return w, err
}
