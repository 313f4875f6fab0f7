package encryptionconfig

import (
	"context"
	"fmt"
	"strings"
)

// HealthCheckName is the name of kube's check of the KMS plugins, in
// /healthz and /readyz (not /livez).
const HealthCheckName = "kms-providers"

// HealthCheck checks every KMS plugin of a configuration; a failure names
// the failing ones "kms-provider-<i>" in configuration order.
type HealthCheck struct{ probes []*kmsProbe }

func newHealthCheck(probes []*kmsProbe) *HealthCheck { return &HealthCheck{probes: probes} }

// Check runs every probe.
func (h *HealthCheck) Check(ctx context.Context) error {
	var msgs []string
	for i, p := range h.probes {
		if err := p.provider.Check(ctx); err != nil {
			msgs = append(msgs, fmt.Sprintf("kms-provider-%d: %v", i, err))
		}
	}
	switch len(msgs) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("%s", msgs[0])
	}
	return fmt.Errorf("[%s]", strings.Join(msgs, ", "))
}
