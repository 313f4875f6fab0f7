package app

import (
	"fmt"
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	tracingapi "k8s.io/component-base/tracing/api/v1"

	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/audit"
	"github.com/capstan-io/capstan/controlplane"
	"github.com/capstan-io/capstan/endpoints"
	"github.com/capstan-io/capstan/kubeletclient"
)

// Config is what Options resolve to, as data: every file the flags name
// has been read and checked, so that a bad one fails the start before
// anything runs, but nothing is started, connected, bound or written.
// Start turns a Config into a Process.
type Config struct {
	// Options are the completed, validated options Start reads the
	// serving, etcd and data-dir settings from.
	Options *Options
	Logger  *slog.Logger

	EventTTL time.Duration
	// Workloads is --allow-privileged and the workload feature gates.
	Workloads controlplane.WorkloadPolicy
	// Kubelet reaches kubelets (the --kubelet-* flags).
	Kubelet *kubeletclient.Client
	// DisabledControllers are the in-process loops --controllers turns off.
	DisabledControllers controlplane.DisabledControllers
	// HA is this replica's identity lease and the election of its loops.
	HA controlplane.HAConfig
	// Admission is the admission flags' plugins and configuration.
	Admission controlplane.AdmissionConfig
	// Authorization is --authorization-mode's authorizer, which the kube
	// server feeds with RBAC objects.
	Authorization *controlplane.Authorization
	// APIs are the group versions and resources --runtime-config serves.
	APIs *endpoints.APIEnablement

	jwt         jwtConfig
	auditPolicy *audit.Policy // nil: nothing is audited
	overrides   []serversOverride
	cachesOff   map[schema.GroupResource]bool
	tracing     *tracingapi.TracingConfiguration // nil: requests are not traced
}

// NewConfig resolves completed, validated options into a Config.
func NewConfig(o *Options, logger *slog.Logger) (*Config, error) {
	c := &Config{Options: o, Logger: logger, EventTTL: o.Misc.EventTTL, DisabledControllers: o.Controllers.disabled(),
		Workloads: controlplane.WorkloadPolicy{
			Pods:                core.PodPolicy{ForbidPrivileged: !o.Misc.AllowPrivileged},
			StatefulSetRecreate: o.Generic.Versions.FeatureGates.Enabled("StatefulSetRecreateStrategy"),
		}}
	o.Generic.Versions.FeatureGates.recordMetrics()
	var err error
	// First, so that a bad --authentication-config fails the start at once.
	if c.jwt, err = o.Authentication.JWT.load(); err != nil {
		return nil, err
	}
	if c.HA, err = o.Controllers.ha(); err != nil {
		return nil, err
	}
	kubelets := o.Misc.Kubelet.clientConfig()
	kubelets.Dial = o.EgressSelector.ClusterDial
	if c.Kubelet, err = kubeletclient.New(kubelets); err != nil {
		return nil, err
	}
	if c.Admission, err = o.Admission.config(); err != nil {
		return nil, err
	}
	c.Admission.EndpointRouting = o.Misc.Aggregator.Routing
	if c.auditPolicy, err = o.Audit.policy(); err != nil {
		return nil, err
	}
	if c.overrides, err = parseServersOverrides(o.Etcd.ServersOverrides); err != nil {
		return nil, err
	}
	if c.cachesOff, err = o.Etcd.cachesOff(); err != nil {
		return nil, err
	}
	if c.tracing, err = o.Traces.config(); err != nil {
		return nil, err
	}
	if c.APIs, err = o.APIEnablement.enablement(); err != nil {
		return nil, err
	}
	if c.Authorization, err = controlplane.NewAuthorization(o.Authorization.config(logger)); err != nil {
		return nil, fmt.Errorf("authorization: %w", err)
	}
	return c, nil
}
