package controlplane

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/endpoints"
	"github.com/capstan-io/capstan/printers"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/server"
)

// componentProbeTimeout is kube's bound on one component's probe.
const componentProbeTimeout = 20 * time.Second

// legacyCoreResources are core/v1's bindings, which bind pods as
// pods/binding does, and componentstatuses, probed at every read.
func legacyCoreResources(pods *registry.Store, checks []server.HealthCheck) []endpoints.Resource {
	return []endpoints.Resource{
		{Name: "bindings", Kind: "Binding", Storage: core.NewLegacyBindingREST(pods), NoFieldManager: true},
		{Name: "componentstatuses", Kind: "ComponentStatus", ShortNames: []string{"cs"}, NoFieldManager: true,
			Storage: core.NewComponentStatusREST(componentProbes(checks)), Table: printers.For(corev1.SchemeGroupVersion.WithKind("ComponentStatus"))},
	}
}

// componentProbes are kube's: the scheduler's and the controller manager's
// /healthz on their default secure ports, and etcd through the server's
// own etcd check.
func componentProbes(checks []server.HealthCheck) map[string]core.Probe {
	// kube probes the components' self-signed ports without verifying them.
	client := &http.Client{Timeout: componentProbeTimeout, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // kube's probe does not verify either
	}}
	probes := map[string]core.Probe{
		"scheduler":          httpProbe(client, "https://127.0.0.1:10259/healthz"),
		"controller-manager": httpProbe(client, "https://127.0.0.1:10257/healthz"),
	}
	for _, c := range checks {
		if c.Name == "etcd" {
			probes["etcd-0"] = checkProbe(c)
		}
	}
	return probes
}

// httpProbe is kube's HTTP probe: healthy on a 2xx or 3xx answer, with its
// body as message; unhealthy with what went wrong as message otherwise.
func httpProbe(client *http.Client, url string) core.Probe {
	return func(ctx context.Context) corev1.ComponentCondition {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return corev1.ComponentCondition{Status: corev1.ConditionUnknown, Error: fmt.Sprintf("failed to construct probe request: %v", err)}
		}
		resp, err := client.Do(req)
		if err != nil {
			return corev1.ComponentCondition{Status: corev1.ConditionFalse, Message: err.Error()}
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 10<<10))
		if resp.StatusCode < 200 || resp.StatusCode >= 400 {
			return corev1.ComponentCondition{Status: corev1.ConditionFalse, Message: fmt.Sprintf("HTTP probe failed with statuscode: %d", resp.StatusCode)}
		}
		return corev1.ComponentCondition{Status: corev1.ConditionTrue, Message: string(body)}
	}
}

// checkProbe runs one of the server's health checks: "ok", or unhealthy
// with the check's error.
func checkProbe(c server.HealthCheck) core.Probe {
	return func(ctx context.Context) corev1.ComponentCondition {
		ctx, cancel := context.WithTimeout(ctx, componentProbeTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "/healthz/"+c.Name, nil)
		if err == nil {
			err = c.Check(req)
		}
		if err != nil {
			return corev1.ComponentCondition{Status: corev1.ConditionFalse, Error: err.Error()}
		}
		return corev1.ComponentCondition{Status: corev1.ConditionTrue, Message: "ok"}
	}
}
