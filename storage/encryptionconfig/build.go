package encryptionconfig

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"

	"k8s.io/apimachinery/pkg/runtime/schema"
	apiserverv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"

	"github.com/capstan-io/capstan/storage/value"
	"github.com/capstan-io/capstan/storage/value/encrypt"
)

// The prefixes of stored values, after which comes the key's name and ":".
const (
	aesCBCPrefix    = "k8s:enc:aescbc:v1:"
	aesGCMPrefix    = "k8s:enc:aesgcm:v1:"
	secretboxPrefix = "k8s:enc:secretbox:v1:"
	kmsV2Prefix     = "k8s:enc:kms:v2:"
)

// errNoPrefix is kube's error for a value no provider of its resource
// recognizes (another provider's, or plain data without identity).
var errNoPrefix = errors.New("no matching prefix found")

type groupResource = schema.GroupResource

type transformerEntry struct{ value.Transformer }

// build makes the transformers of every resource entry. A resource listed
// after a wildcard that covers it would never be used: kube refuses that.
func build(ctx context.Context, cfg *apiserverv1.EncryptionConfiguration, reload bool, logger *slog.Logger) (*Config, error) {
	byResource := map[groupResource][]value.Prefixed{}
	var probes []*kmsProbe
	for _, rc := range cfg.Resources {
		prefixed, p, err := providers(ctx, rc.Providers, logger)
		if err != nil {
			return nil, err
		}
		for _, res := range rc.Resources {
			gr := schema.ParseGroupResource(res)
			for _, mask := range []groupResource{{Group: gr.Group, Resource: "*"}, anyGroupResource} {
				if _, masked := byResource[mask]; masked {
					return nil, fmt.Errorf("resource %q is masked by earlier rule %q", yamlString(gr), yamlString(mask))
				}
			}
			byResource[gr] = append(byResource[gr], prefixed...)
		}
		probes = append(probes, p...)
	}
	c := &Config{transformers: make(map[groupResource]transformerEntry, len(byResource))}
	for gr, list := range byResource {
		c.transformers[gr] = transformerEntry{value.NewPrefixUnion(errNoPrefix, list...)}
	}
	if reload || len(probes) > 0 {
		c.Health = newHealthCheck(probes)
	}
	return c, nil
}

// yamlString writes a group resource as the config file does.
func yamlString(gr groupResource) string {
	if gr.Group == "" && gr.Resource == "*" {
		return "*."
	}
	return gr.String()
}

// providers builds one entry's providers, in order.
func providers(ctx context.Context, list []apiserverv1.ProviderConfiguration, logger *slog.Logger) ([]value.Prefixed, []*kmsProbe, error) {
	var out []value.Prefixed
	var probes []*kmsProbe
	for _, p := range list {
		var t value.Prefixed
		var err error
		switch {
		case p.AESGCM != nil:
			t, err = keyedProvider("aes", aesGCMPrefix, p.AESGCM.Keys, encrypt.NewGCM)
		case p.AESCBC != nil:
			t, err = keyedProvider("aes", aesCBCPrefix, p.AESCBC.Keys, encrypt.NewCBC)
		case p.Secretbox != nil:
			t, err = keyedProvider("secretbox", secretboxPrefix, p.Secretbox.Keys, encrypt.NewSecretbox)
		case p.KMS != nil:
			var probe *kmsProbe
			t, probe, err = kmsProvider(ctx, p.KMS, logger)
			if err == nil {
				probes = append(probes, probe)
			}
		case p.Identity != nil:
			t = value.Prefixed{Prefix: []byte{}, Transformer: value.Identity}
		default:
			err = errors.New(noProviderErr)
		}
		if err != nil {
			return nil, nil, err
		}
		out = append(out, t)
	}
	return out, probes, nil
}

// keyedProvider is a provider with named keys: the first key writes,
// values name the key they were written with after the provider's prefix.
func keyedProvider(kind, prefix string, keys []apiserverv1.Key, newCipher func([]byte) (value.Transformer, error)) (value.Prefixed, error) {
	if len(keys) == 0 {
		return value.Prefixed{}, fmt.Errorf("%s provider has no valid keys", kind)
	}
	var byKey []value.Prefixed
	for _, k := range keys {
		secret, err := base64.StdEncoding.DecodeString(k.Secret)
		if err != nil {
			return value.Prefixed{}, fmt.Errorf("could not obtain secret for named key %s: %w", k.Name, err)
		}
		t, err := newCipher(secret)
		if err != nil {
			return value.Prefixed{}, fmt.Errorf("error while creating cipher for named key %s: %w", k.Name, err)
		}
		byKey = append(byKey, value.Prefixed{Prefix: []byte(k.Name + ":"), Transformer: t})
	}
	noKey := fmt.Errorf("no matching key was found for the provided %s transformer", map[string]string{"aes": "AES", "secretbox": "Secretbox"}[kind])
	return value.Prefixed{Prefix: []byte(prefix), Transformer: value.NewPrefixUnion(noKey, byKey...)}, nil
}

// For returns the transformer of gr: its own entry, else its group's
// "*.<group>", else "*.*", else identity (which refuses encrypted data).
func (c *Config) For(gr groupResource) value.Transformer {
	for _, k := range []groupResource{gr, {Group: gr.Group, Resource: "*"}, anyGroupResource} {
		if t, ok := c.transformers[k]; ok {
			return t.Transformer
		}
	}
	return value.Identity
}
