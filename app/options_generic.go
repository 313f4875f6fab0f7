package app

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// GenericOptions are kube's "generic" section: how requests are limited and
// timed, what every response carries, and how the server shuts down.
type GenericOptions struct {
	AdvertiseAddress   net.IP
	CORSAllowedOrigins []string
	HSTSDirectives     []string
	ExternalHostname   string

	MaxRequestsInFlight int
	MaxMutatingInFlight int
	RequestTimeout      time.Duration
	MinRequestTimeout   int
	GoawayChance        float64

	LivezGracePeriod             time.Duration
	StorageInitializationTimeout time.Duration

	ShutdownDelayDuration               time.Duration
	ShutdownSendRetryAfter              bool
	ShutdownWatchTerminationGracePeriod time.Duration

	// Versions are --emulated-version, --feature-gates and the
	// emulation forward compatibility flags.
	Versions VersionOptions
}

// NewGenericOptions returns kube's defaults.
func NewGenericOptions() GenericOptions {
	return GenericOptions{
		MaxRequestsInFlight: 400, MaxMutatingInFlight: 200, RequestTimeout: time.Minute, MinRequestTimeout: 1800,
		StorageInitializationTimeout: time.Minute,
	}
}

// AddFlags registers the section's flags.
func (o *GenericOptions) AddFlags(fs *pflag.FlagSet) {
	fs.IPVar(&o.AdvertiseAddress, "advertise-address", o.AdvertiseAddress, "The IP address the apiserver advertises to the cluster (the kubernetes Service's endpoint). "+
		"Defaults to --bind-address, or to the host's default interface when that is unspecified.")
	fs.StringSliceVar(&o.CORSAllowedOrigins, "cors-allowed-origins", o.CORSAllowedOrigins, "List of allowed origins for CORS, comma separated. Each is a regular expression matched against the Origin header; "+
		"anchor it (for example '//example.com(:|$)') so that it matches only what it means. Empty disables CORS.")
	fs.StringSliceVar(&o.HSTSDirectives, "strict-transport-security-directives", o.HSTSDirectives, "List of HSTS directives, comma separated, sent in a Strict-Transport-Security header on every response. "+
		"Empty sends none. Example: 'max-age=31536000,includeSubDomains,preload'")
	fs.StringVar(&o.ExternalHostname, "external-hostname", o.ExternalHostname, "The hostname to use in externalized URLs of this server (discovery's server address, OpenID discovery).")
	fs.IntVar(&o.MaxRequestsInFlight, "max-requests-inflight", o.MaxRequestsInFlight, "With --enable-priority-and-fairness, this and --max-mutating-requests-inflight add up to the server's concurrency limit, "+
		"which must be positive. Otherwise the most non-mutating requests in flight at once; 0 means no limit.")
	fs.IntVar(&o.MaxMutatingInFlight, "max-mutating-requests-inflight", o.MaxMutatingInFlight, "With --enable-priority-and-fairness, this and --max-requests-inflight add up to the server's concurrency limit, "+
		"which must be positive. Otherwise the most mutating requests in flight at once; 0 means no limit.")
	fs.DurationVar(&o.RequestTimeout, "request-timeout", o.RequestTimeout, "How long a request may take before it is timed out; "+
		"some kinds of request (watches) follow --min-request-timeout instead.")
	fs.Float64Var(&o.GoawayChance, "goaway-chance", o.GoawayChance, "The fraction of HTTP/2 requests whose connection is closed (GOAWAY) after the response, "+
		"so that clients behind a load balancer spread over the apiservers. Min is 0 (off), max is .02 (1/50 requests); .001 is a good start. "+
		"Leave it off with a single apiserver or no load balancer.")
	fs.DurationVar(&o.LivezGracePeriod, "livez-grace-period", o.LivezGracePeriod, "How long the start may take: until this much time after the start, "+
		"/livez counts post-start hooks that have not finished as healthy.")
	fs.IntVar(&o.MinRequestTimeout, "min-request-timeout", o.MinRequestTimeout, "The least number of seconds a watch is kept open; each watch lasts a random time "+
		"between this and twice this, to spread the load of reconnects.")
	fs.DurationVar(&o.StorageInitializationTimeout, "storage-initialization-timeout", o.StorageInitializationTimeout, "The longest wait for storage to be initialized "+
		"before the apiserver declares itself ready anyway. Defaults to 1m.")
	fs.DurationVar(&o.ShutdownDelayDuration, "shutdown-delay-duration", o.ShutdownDelayDuration, "How long to keep serving normally after a termination signal, "+
		"with /readyz failing and /healthz and /livez passing, before graceful termination starts: time for load balancers to stop sending traffic.")
	fs.BoolVar(&o.ShutdownSendRetryAfter, "shutdown-send-retry-after", o.ShutdownSendRetryAfter, "If true, once graceful termination starts the server keeps listening "+
		"until the requests in flight have drained, answering new requests with 429, a Retry-After header and 'Connection: close'.")
	fs.DurationVar(&o.ShutdownWatchTerminationGracePeriod, "shutdown-watch-termination-grace-period", o.ShutdownWatchTerminationGracePeriod, "If set, the longest "+
		"the server waits for active watches to drain during graceful termination.")
	o.Versions.AddFlags(fs)
}

// Validate reports kube's errors for the section.
func (o *GenericOptions) Validate() error {
	var errs []error
	for _, c := range []struct {
		bad  bool
		what string
	}{
		{o.LivezGracePeriod < 0, "--livez-grace-period can not be a negative value"},
		{o.MaxRequestsInFlight < 0, "--max-requests-inflight can not be negative value"},
		{o.MaxMutatingInFlight < 0, "--max-mutating-requests-inflight can not be negative value"},
		{o.RequestTimeout < 0, "--request-timeout can not be negative value"},
		{o.GoawayChance < 0 || o.GoawayChance > 0.02, "--goaway-chance can not be less than 0 or greater than 0.02"},
		{o.MinRequestTimeout < 0, "--min-request-timeout can not be negative value"},
		{o.StorageInitializationTimeout < 0, "--storage-initialization-timeout can not be negative value"},
		{o.ShutdownDelayDuration < 0, "--shutdown-delay-duration can not be negative value"},
		{o.ShutdownWatchTerminationGracePeriod < 0, "shutdown-watch-termination-grace-period, if provided, can not be a negative value"},
	} {
		if c.bad {
			errs = append(errs, errors.New(c.what))
		}
	}
	if _, err := corsOrigins(o.CORSAllowedOrigins); err != nil {
		errs = append(errs, err)
	}
	if err := validateHSTS(o.HSTSDirectives); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, o.Versions.Validate())
	return errors.Join(errs...)
}

// corsOrigins compiles --cors-allowed-origins. As kube does, each pattern
// must pin the start of the host ("^" or "//") and its end ("$" or ":"):
// "example.com" alone would also allow "example.com.attacker.net".
func corsOrigins(list []string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	var errs []error
	for _, p := range list {
		if p == "" {
			errs = append(errs, errors.New("empty value in --cors-allowed-origins"))
			continue
		}
		re, err := regexp.Compile(p)
		if err == nil && (!strings.Contains(p, "^") && !strings.Contains(p, "//") || !strings.ContainsAny(p, "$:")) {
			err = errors.New("regular expression does not pin to start/end of host in the origin header")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("--cors-allowed-origins has an invalid regular expression: %v", err))
			continue
		}
		out = append(out, re)
	}
	return out, errors.Join(errs...)
}

// validateHSTS checks the directives as kube does: includeSubDomains,
// preload or max-age=<anything>.
func validateHSTS(directives []string) error {
	var errs []error
	for _, d := range directives {
		if strings.TrimSpace(d) == "" {
			errs = append(errs, errors.New("empty value in strict-transport-security-directives"))
			continue
		}
		if d == "includeSubDomains" || d == "preload" {
			continue
		}
		if kv := strings.Split(d, "="); len(kv) != 2 || kv[0] != "max-age" {
			errs = append(errs, errors.New("--strict-transport-security-directives invalid, allowed values: max-age=expireTime, includeSubDomains, preload. "+
				"see https://tools.ietf.org/html/rfc6797#section-6.1 for more information"))
		}
	}
	return errors.Join(errs...)
}
