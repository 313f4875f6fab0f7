package tracing

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad: any --tracing-config-file is refused with an error, never a
// panic; one accepted samples at a rate kube allows.
func FuzzLoad(f *testing.F) {
	for _, seed := range []string{
		"apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: 127.0.0.1:4317\nsamplingRatePerMillion: 100\n",
		"apiVersion: apiserver.config.k8s.io/v1beta1\nkind: TracingConfiguration\nsamplingRatePerMillion: 1000001\n",
		"apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: TracingConfiguration\nendpoint: unix:///run/otel.sock\n",
		`{"apiVersion":"apiserver.config.k8s.io/v1","kind":"TracingConfiguration","endpoint":"http://[::1]:x","samplingRatePerMillion":-1}`,
		"apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\n",
		"endpoint: x\n",
	} {
		f.Add([]byte(seed))
	}
	path := filepath.Join(f.TempDir(), "tracing.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Load(path)
		if err != nil {
			return
		}
		if r := c.SamplingRatePerMillion; r != nil && (*r < 0 || *r > 1000000) {
			t.Fatalf("%q: accepted with samplingRatePerMillion %d", data, *r)
		}
	})
}
