// Package e2eutil holds the helpers test/e2e's packages share: a fresh
// capstan per test (Start) with an admin clientset, raw requests and their
// Status checks, and the fixtures of several subjects (admission webhooks,
// CRDs and conversion webhooks, watches, kube-apiserver run from
// bench/upstream).
package e2eutil
