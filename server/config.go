// Package server is the generic API server: the handler chain, the routing
// of API and non-API paths, delegation to the next server in the chain,
// post-start and pre-shutdown hooks, health checks, TLS serving and
// graceful shutdown. The aggregator, kube and CRD servers are each one of it.
//
// HTTP/2 is served by x/net's server with kube's limits (100 streams per
// connection) and its random write scheduler, which looks only at streams
// with frames to write, where net/http's round robin scans every idle
// watch per frame; DATA frames are cut so that a frame and its header fill
// one TLS record. The in-process loopback client's handlers run on kept
// worker goroutines (filters.Workers), as the timeout filter's do.
package server

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"regexp"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/version"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/audit"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/endpoints"
	"github.com/capstan-io/capstan/endpoints/discovery"
	"github.com/capstan-io/capstan/endpoints/wire"
	"github.com/capstan-io/capstan/flowcontrol"
	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/openapi"
)

// Config is the configuration of one server of the chain. Fields are grouped
// by what owns them; Complete fills defaults and checks what is required.
type Config struct {
	Serving        ServingConfig
	Codecs         CodecConfig
	Authentication authn.Authenticator
	Authorization  authz.Authorizer
	Admission      admission.Chain
	Limits         LimitsConfig
	// FlowControl, if set, admits requests by API Priority and Fairness
	// instead of the max-in-flight limits.
	FlowControl *flowcontrol.Controller
	// Audit records requests as audit events; the zero value audits nothing.
	Audit audit.Config
	// Loopback is the server's in-process client; its authenticator is
	// added to Authentication.
	Loopback *Loopback
	// AuthenticationHeaders are the front proxy's headers
	// (--requestheader-*), removed from authenticated requests.
	AuthenticationHeaders authn.RequestHeaders
	// Discovery is shared by the servers of a chain.
	Discovery *discovery.Registry
	// OpenAPI, if set, holds the definitions of the served kinds, and the
	// chain serves /openapi/v2 and /openapi/v3 for what Discovery lists.
	OpenAPI openapi.Catalog
	// Health is what /healthz, /livez and /readyz check.
	Health HealthConfig
	// Shutdown is how the server stops serving.
	Shutdown ShutdownConfig
	// Debug is where profiles are served, and whether requests are logged.
	Debug DebugConfig
	// Metrics is what /metrics shows.
	Metrics metrics.Options
	// Tracer, if set, traces requests (--tracing-config-file).
	Tracer trace.TracerProvider
	// APIs is --runtime-config: the group versions and resources served
	// (nil: GA versions only); shared by the servers of a chain.
	APIs    *endpoints.APIEnablement
	Version version.Info
	Logger  *slog.Logger
}

// HealthConfig is what the health endpoints check.
type HealthConfig struct {
	// Checks run in /healthz, /livez and /readyz (etcd).
	Checks []HealthCheck
	// LivezGracePeriod is how long after the start /livez counts
	// post-start hooks that have not finished as healthy.
	LivezGracePeriod time.Duration
}

// ShutdownConfig is how the server stops once its context is done.
type ShutdownConfig struct {
	// Delay keeps serving after shutdown begins, with /readyz failing, so
	// load balancers can drain.
	Delay time.Duration
	// SendRetryAfter answers requests that arrive once the delay is over
	// with 429, Retry-After and Connection: close while those in flight
	// drain, instead of closing the listener.
	SendRetryAfter bool
	// WatchTerminationGracePeriod, if set, lets watches run that long
	// after the listener closes before they are ended.
	WatchTerminationGracePeriod time.Duration
}

// DebugConfig is where pprof is served, whether requests are logged, and
// what /flagz shows.
type DebugConfig struct {
	// SocketPath, if set, serves pprof on a unix socket, unauthenticated.
	SocketPath string
	// Profiling serves pprof at /debug/pprof on the secure port, to those
	// allowed the nonResourceURL; ContentionProfiling adds block profiles.
	Profiling, ContentionProfiling bool
	// RequestLog logs every request, as kube does from -v=3.
	RequestLog bool
	// Flags, if set, are the command line's flags and values /flagz shows.
	Flags func() map[string]string
}

// ServingConfig is how the server listens.
type ServingConfig struct {
	Listener net.Listener
	// GetCertificate returns the serving certificate of a handshake (it
	// may be chosen by server name, and reloaded).
	GetCertificate func(*tls.ClientHelloInfo) (*tls.Certificate, error)
	// ClientCAs returns the CAs named to clients as those their
	// certificates should chain to (the x509 authenticator verifies them);
	// nil names none.
	ClientCAs func() *x509.CertPool
	// MinTLSVersion is the lowest TLS version accepted; 0 means TLS 1.2.
	MinTLSVersion uint16
	// CipherSuites are the TLS 1.0-1.2 cipher suites accepted; nil means
	// Go's defaults.
	CipherSuites []uint16
	// CurvePreferences are the key exchanges allowed; nil means Go's.
	CurvePreferences []tls.CurveID
	// ExternalAddress is host:port as clients reach the server.
	ExternalAddress string
	// HTTP2MaxStreamsPerConnection is the streams a client may open on
	// one HTTP/2 connection; 0 means 100, as in kube-apiserver.
	HTTP2MaxStreamsPerConnection int
	// DisableHTTP2 serves HTTP/1.1 only.
	DisableHTTP2 bool
	// GoawayChance is the fraction of HTTP/2 requests after which the
	// connection is closed, so clients spread over replicas.
	GoawayChance float64
	// CORSAllowedOrigins are the origins cross-origin requests may come
	// from; none turns CORS off.
	CORSAllowedOrigins []*regexp.Regexp
	// HSTSDirectives, if any, are sent in Strict-Transport-Security.
	HSTSDirectives []string
}

// CodecConfig is the serializer of the server and the scheme behind it.
type CodecConfig struct {
	Serializer     runtime.NegotiatedSerializer
	ParameterCodec runtime.ParameterCodec
	Creater        runtime.ObjectCreater
	Typer          runtime.ObjectTyper
	Convertor      runtime.ObjectConvertor
	// TypeConverter types objects for managed fields and server-side
	// apply; nil disables both.
	TypeConverter managedfields.TypeConverter
}

// LimitsConfig bounds requests.
type LimitsConfig struct {
	RequestTimeout      time.Duration // 504 past it; default 60s
	MinRequestTimeout   time.Duration // watches last 1-2 times this; default 1800s
	MaxRequestBodyBytes int64         // 413 past it; default 3 MiB
	// MaxRequestsInFlight and MaxMutatingRequestsInFlight bound concurrent
	// reads and writes (429 past them); 0 means no bound.
	MaxRequestsInFlight         int
	MaxMutatingRequestsInFlight int
}

// CompletedConfig is a Config that Complete has checked. Only a
// CompletedConfig can make a server.
type CompletedConfig struct {
	*completedConfig
}

type completedConfig struct {
	Config
	// wire is what the encoders of every server built from this config
	// keep between responses.
	wire *wire.Caches
}

// allowedMediaTypes are the media types a server may serve.
var allowedMediaTypes = []string{runtime.ContentTypeJSON, runtime.ContentTypeYAML, runtime.ContentTypeProtobuf}

// Complete fills defaults and checks that what New needs is there.
func (c Config) Complete() (CompletedConfig, error) {
	if c.Codecs.Serializer == nil {
		return CompletedConfig{}, errors.New("server config has no serializer")
	}
	for _, info := range c.Codecs.Serializer.SupportedMediaTypes() {
		if !contains(allowedMediaTypes, info.MediaType) {
			return CompletedConfig{}, fmt.Errorf("refusing to serve media type %q (allowed media types are: %s)",
				info.MediaType, strings.Join(allowedMediaTypes, ", "))
		}
	}
	if c.Loopback == nil {
		return CompletedConfig{}, errors.New("server config has no loopback client")
	}
	if c.Discovery == nil {
		c.Discovery = discovery.NewRegistry()
	}
	if c.Authorization == nil {
		c.Authorization = authz.AlwaysAllow
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Limits.RequestTimeout == 0 {
		c.Limits.RequestTimeout = 60 * time.Second
	}
	if c.Limits.MinRequestTimeout == 0 {
		c.Limits.MinRequestTimeout = 1800 * time.Second
	}
	if c.Limits.MaxRequestBodyBytes == 0 {
		c.Limits.MaxRequestBodyBytes = 3 * 1024 * 1024
	}
	return CompletedConfig{&completedConfig{Config: c, wire: wire.NewCaches(c.Logger)}}, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
