package app

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	tracingapi "k8s.io/component-base/tracing/api/v1"
	"sigs.k8s.io/yaml"

	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/proxy"
	"github.com/capstan-io/capstan/tracing"
)

// MetricsOptions are kube's "metrics" section: what /metrics leaves out
// (--disabled-metrics, hidden families) and the label values it may show
// (--allow-metric-labels, over those of --allow-metric-labels-manifest).
type MetricsOptions struct {
	AllowLabels         map[string]string
	AllowLabelsManifest string
	Disabled            []string
	ShowHiddenVersion   string
}

// AddFlags registers the section's flags.
func (o *MetricsOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringToStringVar(&o.AllowLabels, "allow-metric-labels", o.AllowLabels, "The map from metric-label to value allow-list of this label. The key's format is <MetricName>,<LabelName>. "+
		"The value's format is <allowed_value>,<allowed_value>...e.g. metric1,label1='v1,v2,v3', metric1,label2='v1,v2,v3' metric2,label1='v1,v2,v3'.")
	fs.StringVar(&o.AllowLabelsManifest, "allow-metric-labels-manifest", o.AllowLabelsManifest, "The path to the manifest file that contains the allow-list mapping. "+
		"The format of the file is the same as the flag --allow-metric-labels. Note that the flag --allow-metric-labels will override the manifest file.")
	fs.StringSliceVar(&o.Disabled, "disabled-metrics", o.Disabled, "This flag provides an escape hatch for misbehaving metrics. "+
		"You must provide the fully qualified metric name in order to disable it. Disclaimer: disabling metrics is higher in precedence than showing hidden metrics.")
	fs.StringVar(&o.ShowHiddenVersion, "show-hidden-metrics-for-version", o.ShowHiddenVersion, "The previous version for which you want to show hidden metrics. "+
		"Only the previous minor version is meaningful, other values will not be allowed. The format is <major>.<minor>, e.g.: '1.16'.")
}

// Validate checks the values as kube does.
func (o *MetricsOptions) Validate() error {
	var errs []error
	if v := o.ShowHiddenVersion; v != "" && v != "1.36" {
		errs = append(errs, fmt.Errorf("--show-hidden-metrics-for-version must be omitted or have the value '1.36'. Only the previous minor version is allowed"))
	}
	for k := range o.AllowLabels {
		if !metricLabelKey.MatchString(k) {
			errs = append(errs, fmt.Errorf("--allow-metric-labels must have a list of kv pair with format `metricName,labelName=labelValue, labelValue,...`"))
			break
		}
	}
	if err := checkReadable("--allow-metric-labels-manifest", o.AllowLabelsManifest); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// options resolves the flags and the manifest into what /metrics shows.
func (o *MetricsOptions) options() (metrics.Options, error) {
	allow := map[string]string{}
	if o.AllowLabelsManifest != "" {
		data, err := os.ReadFile(o.AllowLabelsManifest)
		if err != nil {
			return metrics.Options{}, fmt.Errorf("--allow-metric-labels-manifest: %w", err)
		}
		if err := yaml.Unmarshal(data, &allow); err != nil {
			return metrics.Options{}, fmt.Errorf("--allow-metric-labels-manifest: %w", err)
		}
	}
	maps.Copy(allow, o.AllowLabels)
	out := metrics.Options{Disabled: o.Disabled, ShowHiddenVersion: o.ShowHiddenVersion}
	for key, values := range allow {
		if out.AllowLabels == nil {
			out.AllowLabels = map[string][]string{}
		}
		for _, v := range strings.Split(values, ",") {
			out.AllowLabels[key] = append(out.AllowLabels[key], strings.TrimSpace(v))
		}
	}
	return out, nil
}

var metricLabelKey = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*,[a-zA-Z_][a-zA-Z0-9_]*$`)

// LogsOptions are kube's "logs" section: capstan logs with log/slog, as
// text or JSON, more with each -v.
type LogsOptions struct {
	Format             string
	FlushFrequency     time.Duration
	JSONInfoBufferSize string
	JSONSplitStream    bool
	TextInfoBufferSize string
	TextSplitStream    bool
	Verbosity          int
	VModule            string
}

// NewLogsOptions returns kube's defaults.
func NewLogsOptions() LogsOptions {
	return LogsOptions{Format: "text", FlushFrequency: 5 * time.Second, JSONInfoBufferSize: "0", TextInfoBufferSize: "0"}
}

// AddFlags registers the section's flags.
func (o *LogsOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Format, "logging-format", o.Format, `Sets the log format. Permitted formats: "json", "text".`)
	fs.DurationVar(&o.FlushFrequency, "log-flush-frequency", o.FlushFrequency, "Maximum number of seconds between log flushes")
	fs.StringVar(&o.JSONInfoBufferSize, "log-json-info-buffer-size", o.JSONInfoBufferSize, "[Alpha] In JSON format with split output streams, "+
		"the info messages can be buffered for a while to increase performance. The default value of zero bytes disables buffering.")
	fs.BoolVar(&o.JSONSplitStream, "log-json-split-stream", o.JSONSplitStream, "[Alpha] In JSON format, write error messages to stderr and info messages to stdout.")
	fs.StringVar(&o.TextInfoBufferSize, "log-text-info-buffer-size", o.TextInfoBufferSize, "[Alpha] In text format with split output streams, "+
		"the info messages can be buffered for a while to increase performance. The default value of zero bytes disables buffering.")
	fs.BoolVar(&o.TextSplitStream, "log-text-split-stream", o.TextSplitStream, "[Alpha] In text format, write error messages to stderr and info messages to stdout.")
	fs.IntVarP(&o.Verbosity, "v", "v", o.Verbosity, "number for the log level verbosity")
	fs.StringVar(&o.VModule, "vmodule", o.VModule, "comma-separated list of pattern=N settings for file-filtered logging (only works for text log format)")
	showAs(fs, "v", "Level")
	showAs(fs, "vmodule", "pattern=N,...")
	showAs(fs, "log-json-info-buffer-size", "quantity")
	showAs(fs, "log-text-info-buffer-size", "quantity")
}

// Validate checks the format, and refuses what capstan's logging lacks.
func (o *LogsOptions) Validate() error {
	var errs []error
	if o.Format != "text" && o.Format != "json" {
		errs = append(errs, fmt.Errorf("format: Invalid value: %q: Unsupported log format", o.Format))
	}
	if o.Verbosity < 0 {
		errs = append(errs, fmt.Errorf("verbosity: Invalid value: %d: Must be >= 0", o.Verbosity))
	}
	if _, err := parseVModule(o.VModule); err != nil {
		errs = append(errs, fmt.Errorf("--vmodule: %w", err))
	} else if o.VModule != "" && o.Format != "text" {
		errs = append(errs, errors.New("vmodule: Forbidden: Only supported for text log format"))
	}
	for _, q := range []string{o.JSONInfoBufferSize, o.TextInfoBufferSize} {
		if _, err := resource.ParseQuantity(q); err != nil {
			errs = append(errs, fmt.Errorf("invalid quantity %q: %w", q, err))
		}
	}
	if o.JSONSplitStream || o.TextSplitStream || o.JSONInfoBufferSize != "0" || o.TextInfoBufferSize != "0" {
		errs = append(errs, errors.New("--log-*-split-stream and --log-*-info-buffer-size: capstan writes every message, unbuffered, to one stream"))
	}
	if o.FlushFrequency <= 0 {
		errs = append(errs, errors.New("flushFrequency: Invalid value: must be positive"))
	}
	return errors.Join(errs...)
}

// logger is the server's logger: text or JSON, debug from -v 1 on (each
// 4 slog levels below Info one -v more), by file with --vmodule. Its
// writes are not buffered, so every flush frequency is met.
func (o *LogsOptions) logger(out io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: levelOf(o.Verbosity)}
	if o.Format == "json" {
		return slog.New(slog.NewJSONHandler(out, opts))
	}
	module, _ := parseVModule(o.VModule) // checked by Validate
	if len(module) == 0 {
		return slog.New(slog.NewTextHandler(out, opts))
	}
	opts.Level = levelOf(max(o.Verbosity, module.max()))
	return slog.New(&vmoduleHandler{Handler: slog.NewTextHandler(out, opts), v: o.Verbosity, module: module})
}

// requestLog tells whether requests are logged: kube's httplog logs them
// at -v=3, or with --vmodule giving its file 3.
func (o *LogsOptions) requestLog() bool {
	module, _ := parseVModule(o.VModule)
	if v, ok := module.level("server/filters/httplog.go"); ok {
		return v >= 3
	}
	return o.Verbosity >= 3
}

// TracesOptions is kube's "traces" section: --tracing-config-file.
type TracesOptions struct {
	ConfigFile string
}

// AddFlags registers --tracing-config-file.
func (o *TracesOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ConfigFile, "tracing-config-file", o.ConfigFile, "File with apiserver tracing configuration.")
}

// Validate checks that the configuration file can be read.
func (o *TracesOptions) Validate() error {
	return checkReadable("--tracing-config-file", o.ConfigFile)
}

// config reads and validates the TracingConfiguration; nil without one.
func (o *TracesOptions) config() (*tracingapi.TracingConfiguration, error) {
	if o.ConfigFile == "" {
		return nil, nil
	}
	return tracing.Load(o.ConfigFile)
}

// EgressSelectorOptions is kube's "egress selector" section.
type EgressSelectorOptions struct {
	ConfigFile string
	// ClusterDial is not a flag: a Go caller (testserver.WithClusterDialer)
	// may route the connections to kubelets, nodes, pods and services
	// through it, as kube's egress selector routes the cluster network.
	// Nil dials directly.
	ClusterDial proxy.DialFunc
}

// AddFlags registers --egress-selector-config-file.
func (o *EgressSelectorOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ConfigFile, "egress-selector-config-file", o.ConfigFile, "File with apiserver egress selector configuration.")
}

// Validate refuses an egress configuration: capstan dials directly.
func (o *EgressSelectorOptions) Validate() error {
	if o.ConfigFile == "" {
		return nil
	}
	return errors.Join(checkReadable("--egress-selector-config-file", o.ConfigFile),
		errors.New("--egress-selector-config-file: capstan has no egress selector (konnectivity) yet; it dials webhooks and peers directly"))
}
