// Package core holds the strategies of the core/v1 resources capstan serves:
// namespaces, configmaps, secrets, serviceaccounts, events, pods (with their
// status, ephemeralcontainers, binding and eviction subresources), pod
// templates and replication controllers. Each strategy is a zero-size value
// implementing registry.Strategy and the capability interfaces its resource
// needs; the validation functions reproduce the rules and messages of
// kube-apiserver for the parts of an object other than its metadata, which
// the generic Store validates.
package core
