package app

import (
	"fmt"
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/capstan-io/capstan/flowcontrol"
)

// FlowControlOptions is --enable-priority-and-fairness.
type FlowControlOptions struct {
	EnablePriorityAndFairness bool
}

// NewFlowControlOptions returns kube's default: enabled.
func NewFlowControlOptions() FlowControlOptions {
	return FlowControlOptions{EnablePriorityAndFairness: true}
}

// AddFlags registers the flag.
func (o *FlowControlOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.EnablePriorityAndFairness, "enable-priority-and-fairness", o.EnablePriorityAndFairness, ""+
		"If true, replace the max-in-flight handler with an enhanced one that queues and dispatches with priority and fairness")
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
