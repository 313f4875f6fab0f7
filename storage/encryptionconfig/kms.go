package encryptionconfig

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	apiserverv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"

	"github.com/capstan-io/capstan/storage/value"
	"github.com/capstan-io/capstan/storage/value/kmsv2"
)

// kmsProbe is the health probe of one KMS provider.
type kmsProbe struct{ provider *kmsv2.Provider }

// errKMSv1 is kube's refusal of KMS v1, disabled by default since 1.29
// (capstan has no KMSv1 feature gate to turn it back on).
var errKMSv1 = errors.New("KMSv1 is deprecated and will only receive security updates going forward. Use KMSv2 instead.  Set --feature-gates=KMSv1=true to use the deprecated KMSv1 feature.")

// kmsProvider connects to a KMS v2 plugin; values are prefixed
// "k8s:enc:kms:v2:<name>:".
func kmsProvider(ctx context.Context, c *apiserverv1.KMSConfiguration, logger *slog.Logger) (value.Prefixed, *kmsProbe, error) {
	switch c.APIVersion {
	case "v1":
		return value.Prefixed{}, nil, errKMSv1
	case "v2":
	default:
		return value.Prefixed{}, nil, fmt.Errorf("could not configure KMS plugin %q, unsupported KMS API version %q", c.Name, c.APIVersion)
	}
	svc, err := kmsv2.Dial(ctx, c.Endpoint, c.Timeout.Duration)
	if err != nil {
		return value.Prefixed{}, nil, fmt.Errorf("could not configure KMSv2-Plugin's probe %q, error: %w", c.Name, err)
	}
	p := kmsv2.NewProvider(ctx, c.Name, svc, logger)
	return value.Prefixed{Prefix: []byte(kmsV2Prefix + c.Name + ":"), Transformer: p}, &kmsProbe{provider: p}, nil
}
