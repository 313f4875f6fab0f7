package app

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/capstan-io/capstan/audit"
	"github.com/capstan-io/capstan/audit/backend"
)

// AuditOptions are kube-apiserver's --audit-* flags. Without a policy file
// nothing is audited.
type AuditOptions struct {
	PolicyFile string
	Log        AuditLogOptions
	Webhook    AuditWebhookOptions
}

// AuditLogOptions are the --audit-log-* flags.
type AuditLogOptions struct {
	File     backend.LogFile
	Format   string
	Version  string
	Mode     string
	Batch    backend.BatchConfig
	Truncate backend.TruncateConfig
}

// AuditWebhookOptions are the --audit-webhook-* flags.
type AuditWebhookOptions struct {
	ConfigFile     string
	InitialBackoff time.Duration
	Version        string
	Mode           string
	Batch          backend.BatchConfig
	Truncate       backend.TruncateConfig
}

// NewAuditOptions returns kube's defaults.
func NewAuditOptions() AuditOptions {
	return AuditOptions{
		Log: AuditLogOptions{File: backend.LogFile{MaxAgeDays: 366, MaxBackups: 100, MaxSizeMB: 100},
			Format: backend.FormatJSON, Version: auditv1.SchemeGroupVersion.String(),
			Mode: backend.ModeBlocking, Batch: backend.DefaultLogBatch, Truncate: backend.DefaultTruncate},
		Webhook: AuditWebhookOptions{InitialBackoff: backend.DefaultInitialBackoff, Version: auditv1.SchemeGroupVersion.String(),
			Mode: backend.ModeBatch, Batch: backend.DefaultWebhookBatch, Truncate: backend.DefaultTruncate},
	}
}

// AddFlags registers the flags, with kube's names and help.
func (o *AuditOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.PolicyFile, "audit-policy-file", o.PolicyFile, "Path to the file that defines the audit policy configuration.")
	l := &o.Log
	fs.StringVar(&l.File.Path, "audit-log-path", l.File.Path, "If set, all requests coming to the apiserver will be logged to this file.  '-' means standard out.")
	fs.IntVar(&l.File.MaxAgeDays, "audit-log-maxage", l.File.MaxAgeDays, "The maximum number of days to retain old audit log files based on the timestamp encoded in their filename. Setting a value of 0 means old audit log files are not removed based on age.")
	fs.IntVar(&l.File.MaxBackups, "audit-log-maxbackup", l.File.MaxBackups, "The maximum number of old audit log files to retain. Setting a value of 0 will mean there's no restriction on the number of files.")
	fs.IntVar(&l.File.MaxSizeMB, "audit-log-maxsize", l.File.MaxSizeMB, "The maximum size in megabytes of the audit log file before it gets rotated. Setting to 0 disables rotation (not recommended).")
	fs.BoolVar(&l.File.Compress, "audit-log-compress", l.File.Compress, "If set, the rotated log files will be compressed using gzip.")
	fs.StringVar(&l.Format, "audit-log-format", l.Format, "Format of saved audits. \"legacy\" indicates 1-line text format for each event. \"json\" indicates structured json format. Known formats are "+strings.Join(backend.Formats, ",")+".")
	fs.StringVar(&l.Version, "audit-log-version", l.Version, "API group and version used for serializing audit events written to log.")
	addBatchFlags(fs, "log", &l.Mode, &l.Batch)
	addTruncateFlags(fs, "log", &l.Truncate)
	w := &o.Webhook
	fs.StringVar(&w.ConfigFile, "audit-webhook-config-file", w.ConfigFile, "Path to a kubeconfig formatted file that defines the audit webhook configuration.")
	fs.DurationVar(&w.InitialBackoff, "audit-webhook-initial-backoff", w.InitialBackoff, "The amount of time to wait before retrying the first failed request.")
	fs.StringVar(&w.Version, "audit-webhook-version", w.Version, "API group and version used for serializing audit events written to webhook.")
	addBatchFlags(fs, "webhook", &w.Mode, &w.Batch)
	addTruncateFlags(fs, "webhook", &w.Truncate)
}

func addTruncateFlags(fs *pflag.FlagSet, plugin string, c *backend.TruncateConfig) {
	prefix := "audit-" + plugin + "-truncate-"
	fs.BoolVar(&c.Enabled, prefix+"enabled", c.Enabled, "Whether event and batch truncating is enabled.")
	fs.Int64Var(&c.MaxBatchSize, prefix+"max-batch-size", c.MaxBatchSize, "Maximum size of the batch sent to the underlying backend. "+
		"Actual serialized size can be several hundreds of bytes greater. If a batch exceeds this limit, it is split into several batches of smaller size.")
	fs.Int64Var(&c.MaxEventSize, prefix+"max-event-size", c.MaxEventSize, "Maximum size of the audit event sent to the underlying backend. "+
		"If the size of an event is greater than this number, first request and response are removed, and if this doesn't reduce the size enough, event is discarded.")
}

func addBatchFlags(fs *pflag.FlagSet, plugin string, mode *string, c *backend.BatchConfig) {
	prefix := "audit-" + plugin + "-"
	fs.StringVar(mode, prefix+"mode", *mode, "Strategy for sending audit events. Blocking indicates sending events should block server responses. "+
		"Batch causes the backend to buffer and write events asynchronously. Known modes are "+strings.Join(backend.Modes, ",")+".")
	fs.IntVar(&c.BufferSize, prefix+"batch-buffer-size", c.BufferSize, "The size of the buffer to store events before batching and writing. Only used in batch mode.")
	fs.IntVar(&c.MaxBatchSize, prefix+"batch-max-size", c.MaxBatchSize, "The maximum size of a batch. Only used in batch mode.")
	fs.DurationVar(&c.MaxBatchWait, prefix+"batch-max-wait", c.MaxBatchWait, "The amount of time to wait before force writing the batch that hadn't reached the max size. Only used in batch mode.")
	fs.BoolVar(&c.ThrottleEnable, prefix+"batch-throttle-enable", c.ThrottleEnable, "Whether batching throttling is enabled. Only used in batch mode.")
	fs.Float32Var(&c.ThrottleQPS, prefix+"batch-throttle-qps", c.ThrottleQPS, "Maximum average number of batches per second. Only used in batch mode.")
	fs.IntVar(&c.ThrottleBurst, prefix+"batch-throttle-burst", c.ThrottleBurst, "Maximum number of requests sent at the same moment if ThrottleQPS was not utilized before. Only used in batch mode.")
}

// Validate reports what kube reports about the flags of the backends in use.
func (o *AuditOptions) Validate() error {
	var errs []error
	if l := o.Log; l.File.Path != "" {
		errs = append(errs, validateBatch("log", l.Mode, l.Batch), l.Truncate.Validate("log"), validateAuditVersion(l.Version))
		if l.Format != backend.FormatJSON && l.Format != backend.FormatLegacy {
			errs = append(errs, fmt.Errorf("invalid audit log format %s, allowed formats are %q", l.Format, strings.Join(backend.Formats, ",")))
		}
		for _, f := range []struct {
			name  string
			value int
		}{{"maxage", l.File.MaxAgeDays}, {"maxbackup", l.File.MaxBackups}, {"maxsize", l.File.MaxSizeMB}} {
			if f.value < 0 {
				errs = append(errs, fmt.Errorf("--audit-log-%s %v can't be a negative number", f.name, f.value))
			}
		}
	}
	if w := o.Webhook; w.ConfigFile != "" {
		errs = append(errs, validateBatch("webhook", w.Mode, w.Batch), w.Truncate.Validate("webhook"), validateAuditVersion(w.Version))
	}
	return errors.Join(errs...)
}

func validateBatch(plugin, mode string, c backend.BatchConfig) error {
	if !slices.Contains(backend.Modes, mode) {
		return fmt.Errorf("invalid audit %s mode %s, allowed modes are %q", plugin, mode, strings.Join(backend.Modes, ","))
	}
	if mode != backend.ModeBatch {
		return nil
	}
	return c.Validate(plugin)
}

func validateAuditVersion(v string) error {
	if v != auditv1.SchemeGroupVersion.String() {
		return fmt.Errorf("invalid group version, allowed versions are %q", []string{auditv1.SchemeGroupVersion.String()})
	}
	return nil
}

// policy loads the policy file; nil without one. Without a backend to
// send events to it is checked but unused, as kube does.
func (o *AuditOptions) policy() (*audit.Policy, error) {
	if o.PolicyFile == "" {
		return nil, nil
	}
	p, err := audit.LoadPolicy(o.PolicyFile)
	if err != nil {
		return nil, fmt.Errorf("loading audit policy file: %w", err)
	}
	return audit.NewPolicy(p), nil
}

// backend opens the log file and the webhook; nil when none is asked for.
// It is not running yet.
func (o *AuditOptions) backend(logger *slog.Logger) (audit.Backend, error) {
	var backends []audit.Backend
	if o.Log.File.Path != "" {
		out, err := o.Log.File.Open()
		if err != nil {
			return nil, fmt.Errorf("--audit-log-path: %w", err)
		}
		l, err := backend.NewLog(out, o.Log.Format, logger)
		if err != nil {
			return nil, err
		}
		b, err := backend.WithMode(l, o.Log.Mode, o.Log.Batch, logger)
		if err != nil {
			return nil, err
		}
		backends = append(backends, backend.WithTruncate(b, o.Log.Truncate, logger))
	}
	if o.Webhook.ConfigFile != "" {
		w, err := backend.NewWebhook(o.Webhook.ConfigFile, o.Webhook.InitialBackoff, logger)
		if err != nil {
			return nil, fmt.Errorf("initializing audit webhook: %w", err)
		}
		b, err := backend.WithMode(w, o.Webhook.Mode, o.Webhook.Batch, logger)
		if err != nil {
			return nil, err
		}
		backends = append(backends, backend.WithTruncate(b, o.Webhook.Truncate, logger))
	}
	if len(backends) == 0 {
		return nil, nil
	}
	return audit.Union(backends...), nil
}
