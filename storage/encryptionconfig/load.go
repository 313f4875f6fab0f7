// Package encryptionconfig reads --encryption-provider-config (an
// EncryptionConfiguration of apiserver.config.k8s.io/v1), validates it with
// kube-apiserver's rules and messages, and builds the transformer of each
// resource: the first provider of a resource's entry writes, all of them
// read. A Set serves the transformers of the current configuration and, with
// automatic reload, swaps in a changed file's configuration once it is valid
// and its KMS plugins are healthy, keeping the old one otherwise.
package encryptionconfig

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	apiserverv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
)

var (
	configScheme = runtime.NewScheme()
	configCodecs = serializer.NewCodecFactory(configScheme, serializer.EnableStrict)
)

func init() {
	utilruntime.Must(apiserverv1.AddToScheme(configScheme))
}

// readFile returns the file's bytes and kube's hash of them, which tells
// whether a reload has anything new.
func readFile(path string) ([]byte, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("error reading encryption provider configuration file %q: %w", path, err)
	}
	if len(data) == 0 {
		return nil, "", fmt.Errorf("encryption provider configuration file %q is empty", path)
	}
	return data, fmt.Sprintf("sha256:%x", sha256.Sum256(data)), nil
}

// decode parses data strictly (unknown or duplicate fields are errors, as
// in kube) and applies v1's defaults (KMS timeout 3s, apiVersion v1).
func decode(path string, data []byte) (*apiserverv1.EncryptionConfiguration, error) {
	obj, gvk, err := configCodecs.UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("error decoding encryption provider configuration file %q: %w", path, err)
	}
	cfg, ok := obj.(*apiserverv1.EncryptionConfiguration)
	if !ok {
		return nil, fmt.Errorf("got unexpected config type: %v", gvk)
	}
	configScheme.Default(cfg)
	return cfg, nil
}

// Config is one loaded configuration: the transformer of each configured
// resource pattern, and the health check of its KMS plugins.
type Config struct {
	transformers map[groupResource]transformerEntry
	// Health is the "kms-providers" check; nil when kube has none (no
	// KMS and no automatic reload).
	Health *HealthCheck
	// Hash is "sha256:<hex>" of the file's bytes.
	Hash string
	// close releases the KMS connections.
	close context.CancelFunc
}

// Load reads, validates and builds the configuration at path. reload tells
// whether the file may be reloaded, which, as in kube, also makes KMS
// provider names unique and groups the KMS checks under one name.
// logger receives the KMS probes' failures (nil discards).
func Load(ctx context.Context, path string, reload bool, logger *slog.Logger) (*Config, error) {
	data, hash, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("error while parsing file: error while loading file: %w", err)
	}
	cfg, err := decode(path, data)
	if err != nil {
		return nil, fmt.Errorf("error while parsing file: %w", err)
	}
	if errs := validate(cfg, reload); len(errs) > 0 {
		return nil, fmt.Errorf("error while parsing file: %w", errs.ToAggregate())
	}
	ctx, cancel := context.WithCancel(ctx)
	c, err := build(ctx, cfg, reload, logger)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("error while building transformers: %w", err)
	}
	c.Hash, c.close = hash, cancel
	return c, nil
}

// Close releases the configuration's KMS connections.
func (c *Config) Close() {
	if c != nil && c.close != nil {
		c.close()
	}
}
