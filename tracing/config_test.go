package tracing

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		endpoint   string
		rate       int32
		err        string
	}{
		{name: "v1", file: "apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: 127.0.0.1:4317\nsamplingRatePerMillion: 100\n",
			endpoint: "127.0.0.1:4317", rate: 100},
		{name: "v1beta1", file: "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: TracingConfiguration\nsamplingRatePerMillion: 7\n", rate: 7},
		{name: "v1alpha1", file: "apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: TracingConfiguration\nendpoint: unix:///run/otel.sock\n",
			endpoint: "unix:///run/otel.sock"},
		{name: "rate over a million", file: "apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nsamplingRatePerMillion: 1000001\n",
			err: "failed to validate tracing configuration: samplingRatePerMillion: Invalid value: 1000001: sampling rate per million must be less than or equal to one million"},
		{name: "negative rate", file: "apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nsamplingRatePerMillion: -1\n",
			err: "sampling rate must be positive"},
		{name: "bad scheme", file: "apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: http://collector:4317\n",
			err: "unsupported scheme: http"},
		{name: "unknown field", file: "apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoints: x\n",
			err: `unable to decode tracing configuration data: strict decoding error: unknown field "endpoints"`},
		{name: "another kind", file: "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\n",
			err: "is not a TracingConfiguration"},
		{name: "no kind", file: "endpoint: x\n", err: "unable to decode tracing configuration data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tracing.yaml")
			if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := Load(path)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := deref(c.Endpoint); got != tc.endpoint {
				t.Errorf("endpoint = %q, want %q", got, tc.endpoint)
			}
			if c.SamplingRatePerMillion != nil && *c.SamplingRatePerMillion != tc.rate || c.SamplingRatePerMillion == nil && tc.rate != 0 {
				t.Errorf("samplingRatePerMillion = %v, want %d", c.SamplingRatePerMillion, tc.rate)
			}
		})
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "unable to read tracing configuration") {
		t.Errorf("missing file: %v", err)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
