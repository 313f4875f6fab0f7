package controlplane

import (
	"context"
	"fmt"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-io/capstan/apis/flowcontrol"
	"github.com/capstan-io/capstan/apis/flowcontrol/bootstrap"
	"github.com/capstan-io/capstan/server"
)

// priorityFlowcontrol orders flowcontrol.apiserver.k8s.io in /apis, as kube.
const priorityFlowcontrol = 16100

// flowcontrolGroup is flowcontrol.apiserver.k8s.io/v1, the configuration
// of API Priority and Fairness.
func (f *storeBuilder) flowcontrolGroup() (builtGroup, error) {
	specs := []resourceSpec{
		{name: "flowschemas", kind: "FlowSchema", strategy: flowcontrol.FlowSchemaStrategy{},
			status:  flowcontrol.FlowSchemaStatusStrategy{},
			new:     func() runtime.Object { return &flowcontrolv1.FlowSchema{} },
			newList: func() runtime.Object { return &flowcontrolv1.FlowSchemaList{} }},
		{name: "prioritylevelconfigurations", kind: "PriorityLevelConfiguration", strategy: flowcontrol.PriorityLevelStrategy{},
			status:  flowcontrol.PriorityLevelStatusStrategy{},
			new:     func() runtime.Object { return &flowcontrolv1.PriorityLevelConfiguration{} },
			newList: func() runtime.Object { return &flowcontrolv1.PriorityLevelConfigurationList{} }},
	}
	bg, err := f.buildGroup(flowcontrolv1.GroupName, priorityFlowcontrol, flowcontrolv1.SchemeGroupVersion, specs)
	if err != nil {
		return bg, err
	}
	statusKeepsMetadata(&bg)
	return bg, nil
}

// Timing of the APF configuration producer, kube's.
const (
	apfEnsureRetry  = time.Second
	apfEnsureWithin = 5 * time.Minute
	apfEnsureEvery  = time.Minute
)

// produceAPFConfiguration is the priority-and-fairness-config-producer
// hook: it reconciles the bootstrap configuration until that succeeds,
// then again every minute, so that a deleted mandatory object comes back
// while the server runs, as in kube. It runs whether or not APF filters
// requests.
func (c Config) produceAPFConfiguration(hc server.HookContext) error {
	client, err := kubernetes.NewForConfig(hc.LoopbackClientConfig)
	if err != nil {
		return err
	}
	logger := c.Logger.With("hook", "priority-and-fairness-config-producer")
	r := bootstrap.Reconciler{Client: client.FlowcontrolV1(), Logger: logger}
	ctx, cancel := context.WithTimeout(hc, apfEnsureWithin)
	defer cancel()
	var last error
	err = wait.PollUntilContextCancel(ctx, apfEnsureRetry, true, func(ctx context.Context) (bool, error) {
		last = r.Ensure(ctx)
		if last != nil {
			logger.Debug("APF bootstrap configuration, will retry", "err", last)
		}
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("unable to initialize APF bootstrap configuration: %w (last error: %v)", err, last)
	}
	go func() {
		tick := time.NewTicker(apfEnsureEvery)
		defer tick.Stop()
		for {
			select {
			case <-hc.Done():
				return
			case <-tick.C:
			}
			if err := r.Ensure(hc); err != nil && hc.Err() == nil {
				logger.Warn("APF bootstrap configuration, will retry", "err", err)
			}
		}
	}()
	return nil
}
