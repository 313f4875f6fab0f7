package testserver

import (
	"context"
	"net"
	"time"
)

// Option configures a server Start makes.
type Option func(*options)

type options struct {
	flags      []string
	crdPaths   []string
	crdDocs    [][]byte
	crdTimeout time.Duration
	logs       bool
	dial       func(ctx context.Context, network, addr string) (net.Conn, error)
}

// WithFlags adds capstan command-line flags (kube-apiserver's names), given
// after the ones Start sets: --authorization-mode=AlwaysAllow, say, or
// --controllers=-garbagecollector.
func WithFlags(flags ...string) Option {
	return func(o *options) { o.flags = append(o.flags, flags...) }
}

// WithAuthorizationMode sets --authorization-mode (default Node,RBAC; the
// returned config is system:masters, which every mode allows).
func WithAuthorizationMode(modes ...string) Option {
	return func(o *options) {
		m := ""
		for i, mode := range modes {
			if i > 0 {
				m += ","
			}
			m += mode
		}
		o.flags = append(o.flags, "--authorization-mode="+m)
	}
}

// WithAuthentication adds authentication flags: WithAuthentication(
// "--token-auth-file=tokens.csv", "--anonymous-auth=false"), say. The
// returned config authenticates by a client certificate, which stays valid.
func WithAuthentication(flags ...string) Option { return WithFlags(flags...) }

// WithCRDPaths installs the CustomResourceDefinitions found in these files
// and directories (.yaml, .yml and .json files, several documents each; other
// kinds are skipped), as envtest's CRDInstallOptions.Paths, and waits
// until each is established and served. A path that does not exist fails
// the start, as envtest's ErrorIfPathMissing.
func WithCRDPaths(paths ...string) Option {
	return func(o *options) { o.crdPaths = append(o.crdPaths, paths...) }
}

// WithCRDs installs CustomResourceDefinitions given as YAML or JSON
// documents, as WithCRDPaths does those in files.
func WithCRDs(docs ...[]byte) Option {
	return func(o *options) { o.crdDocs = append(o.crdDocs, docs...) }
}

// WithCRDTimeout bounds the wait for the CRDs to be served (default a
// minute).
func WithCRDTimeout(d time.Duration) Option {
	return func(o *options) { o.crdTimeout = d }
}

// WithLogs writes capstan's log to the test's stderr (also on with
// CAPSTAN_TEST_LOG set).
func WithLogs() Option {
	return func(o *options) { o.logs = true }
}

// WithClusterDialer makes the server reach kubelets, nodes, pods and
// services (logs, exec, the proxy subresources) through dial, as kube's
// egress selector routes its cluster network: a test can stand a loopback
// server in for a pod or node address.
func WithClusterDialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) Option {
	return func(o *options) { o.dial = dial }
}
