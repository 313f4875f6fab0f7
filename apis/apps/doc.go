// Package apps holds the strategies of the apps/v1 resources: deployments,
// replica sets, stateful sets, daemon sets and controller revisions. Each
// strategy is a zero-size value (or a small struct of resolved feature
// options) implementing registry.Strategy and the capability interfaces its
// resource needs. Defaults follow kube's apps/v1 scheme defaulting; the
// validation functions reproduce the field paths and messages of
// kube-apiserver for everything but metadata, which the generic Store
// validates. Pod templates are defaulted and validated by the core package.
package apps
