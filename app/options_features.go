package app

import (
	"fmt"
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/capstan-io/capstan/flowcontrol"
)

// FeatureOptions are kube's "features" section: profiling and priority and
// fairness.
type FeatureOptions struct {
	Profiling                 bool
	ContentionProfiling       bool
	DebugSocketPath           string
	EnablePriorityAndFairness bool
}

// NewFeatureOptions returns kube's defaults: profiling and APF on.
func NewFeatureOptions() FeatureOptions {
	return FeatureOptions{Profiling: true, EnablePriorityAndFairness: true}
}

// AddFlags registers the section's flags.
func (o *FeatureOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Profiling, "profiling", o.Profiling, "Enable profiling via web interface host:port/debug/pprof/")
	fs.BoolVar(&o.ContentionProfiling, "contention-profiling", o.ContentionProfiling, "Enable block profiling, if profiling is enabled")
	fs.StringVar(&o.DebugSocketPath, "debug-socket-path", o.DebugSocketPath, "Use an unprotected (no authn/authz) unix-domain socket for profiling with the given path")
	fs.BoolVar(&o.EnablePriorityAndFairness, "enable-priority-and-fairness", o.EnablePriorityAndFairness, "If true, replace the max-in-flight handler "+
		"with one that queues and dispatches requests with priority and fairness")
}

// Validate checks the limits APF divides, kube's rule.
func (o *FeatureOptions) Validate(g GenericOptions) error {
	if o.EnablePriorityAndFairness && g.MaxRequestsInFlight+g.MaxMutatingInFlight <= 0 {
		return fmt.Errorf("invalid configuration: MaxRequestsInFlight=%d and MaxMutatingRequestsInFlight=%d; they must add up to something positive",
			g.MaxRequestsInFlight, g.MaxMutatingInFlight)
	}
	return nil
}

// flowControl returns the APF controller, or nil when max-in-flight limits
// requests instead.
func (o *FeatureOptions) flowControl(g GenericOptions, counts flowcontrol.ObjectCounter, logger *slog.Logger) *flowcontrol.Controller {
	if !o.EnablePriorityAndFairness {
		return nil
	}
	return flowcontrol.NewController(flowcontrol.Config{
		ServerConcurrencyLimit: g.MaxRequestsInFlight + g.MaxMutatingInFlight,
		DefaultWaitLimit:       g.RequestTimeout / 4,
		ObjectCounts:           counts,
		Logger:                 logger,
	})
}
