package app

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/pflag"

	"github.com/capstan-io/capstan/controlplane"
	"github.com/capstan-io/capstan/flowcontrol"
)

// FlowControlOptions is --enable-priority-and-fairness and how often the
// object counts its estimates of lists read are refreshed.
type FlowControlOptions struct {
	EnablePriorityAndFairness bool
	CountPollPeriod           time.Duration
}

// NewFlowControlOptions returns kube's defaults: enabled, counts read
// every minute.
func NewFlowControlOptions() FlowControlOptions {
	return FlowControlOptions{EnablePriorityAndFairness: true, CountPollPeriod: controlplane.DefaultCountPollPeriod}
}

// AddFlags registers the flag.
func (o *FlowControlOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.EnablePriorityAndFairness, "enable-priority-and-fairness", o.EnablePriorityAndFairness, ""+
		"If true, replace the max-in-flight handler with an enhanced one that queues and dispatches with priority and fairness")
	fs.DurationVar(&o.CountPollPeriod, "etcd-count-metric-poll-period", o.CountPollPeriod, ""+
		"Frequency of polling etcd for number of resources per type. 0 disables the metric collection.")
}

// Validate checks the limits APF divides, kube's rule.
func (o *FlowControlOptions) Validate(maxReadOnly, maxMutating int) error {
	if o.EnablePriorityAndFairness && maxReadOnly+maxMutating <= 0 {
		return fmt.Errorf("invalid configuration: MaxRequestsInFlight=%d and MaxMutatingRequestsInFlight=%d; they must add up to something positive", maxReadOnly, maxMutating)
	}
	return nil
}

// controller returns the APF controller, or nil when max-in-flight
// limits requests instead.
func (o *FlowControlOptions) controller(all *Options, counts flowcontrol.ObjectCounter, logger *slog.Logger) *flowcontrol.Controller {
	if !o.EnablePriorityAndFairness {
		return nil
	}
	return flowcontrol.NewController(flowcontrol.Config{
		ServerConcurrencyLimit: all.MaxRequestsInFlight + all.MaxMutatingInFlight,
		DefaultWaitLimit:       all.RequestTimeout / 4,
		ObjectCounts:           counts,
		Logger:                 logger,
	})
}
