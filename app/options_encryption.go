package app

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/spf13/pflag"

	"github.com/capstan-io/capstan/server"
	"github.com/capstan-io/capstan/storage/encryptionconfig"
)

// EncryptionOptions are kube-apiserver's flags of encryption at rest.
type EncryptionOptions struct {
	// ProviderConfig is --encryption-provider-config: an
	// EncryptionConfiguration file.
	ProviderConfig string
	// AutomaticReload is --encryption-provider-config-automatic-reload.
	AutomaticReload bool
	// ReloadInterval is how often the file is looked at: kube's minute,
	// shorter in tests (a hidden flag).
	ReloadInterval time.Duration
}

// NewEncryptionOptions returns the defaults.
func NewEncryptionOptions() EncryptionOptions {
	return EncryptionOptions{ReloadInterval: encryptionconfig.ReloadInterval}
}

// AddFlags registers the flags.
func (o *EncryptionOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ProviderConfig, "encryption-provider-config", o.ProviderConfig,
		"The file containing configuration for encryption providers to be used for storing secrets in etcd")
	fs.BoolVar(&o.AutomaticReload, "encryption-provider-config-automatic-reload", o.AutomaticReload,
		"Determines if the file set by --encryption-provider-config should be automatically reloaded if the disk contents change. "+
			"Setting this to true disables the ability to uniquely identify distinct KMS plugins via the API server healthz endpoints.")
	fs.DurationVar(&o.ReloadInterval, "encryption-provider-config-reload-interval", o.ReloadInterval,
		"How often the file of --encryption-provider-config-automatic-reload is looked at (for tests).")
	_ = fs.MarkHidden("encryption-provider-config-reload-interval")
}

// Validate reports what is wrong with the flags, with kube's message.
func (o *EncryptionOptions) Validate() error {
	var errs []error
	if o.ProviderConfig == "" && o.AutomaticReload {
		errs = append(errs, errors.New("--encryption-provider-config-automatic-reload must be set with --encryption-provider-config"))
	}
	if o.ReloadInterval <= 0 {
		errs = append(errs, errors.New("--encryption-provider-config-reload-interval must be positive"))
	}
	return errors.Join(errs...)
}

// load reads the configuration; nil without --encryption-provider-config.
// ctx bounds the KMS plugin connections.
func (o *EncryptionOptions) load(ctx context.Context, logger *slog.Logger) (*encryptionconfig.Set, error) {
	if o.ProviderConfig == "" {
		return nil, nil
	}
	return encryptionconfig.NewSet(ctx, o.ProviderConfig, o.AutomaticReload, logger)
}

// encryptionHealthCheck is kube's kms-providers check, in /healthz and
// /readyz but not /livez, when kube has it.
func encryptionHealthCheck(set *encryptionconfig.Set) []server.HealthCheck {
	if set == nil || !set.HasHealthCheck() {
		return nil
	}
	return []server.HealthCheck{{Name: encryptionconfig.HealthCheckName, NotLivez: true,
		Check: func(r *http.Request) error { return set.Check(r.Context()) }}}
}

// addEncryptionHooks starts the automatic reload after start, as kube's
// post-start hook of the same name does.
func (p *Process) addEncryptionHooks(s *server.Server, o *EncryptionOptions) {
	if p.encryption == nil || !o.AutomaticReload {
		return
	}
	set, interval := p.encryption, o.ReloadInterval
	s.AddPostStartHook("start-encryption-provider-config-automatic-reload", func(hc server.HookContext) error {
		go set.Run(hc, interval)
		return nil
	})
}
