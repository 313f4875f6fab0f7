package app

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/capstan-io/capstan/kubeletclient"
)

// MiscOptions are kube's "misc" section: pods, services, kubelets, the
// front proxy's client certificate and peers.
type MiscOptions struct {
	AllowPrivileged bool
	EventTTL        time.Duration
	// Services are --service-cluster-ip-range and --service-node-port-range.
	Services                  ServiceOptions
	EndpointReconcilerType    string
	KubernetesServiceNodePort int
	APIServerCount            int
	MaxConnectionBytesPerSec  int64
	EnableLogsHandler         bool
	// Kubelet are the --kubelet-* flags.
	Kubelet KubeletOptions
	// ProxyClient is --proxy-client-cert-file and --proxy-client-key-file.
	ProxyClient ProxyClientOptions
	// Aggregator are --enable-aggregator-routing and --aggregator-reject-forwarding-redirect.
	Aggregator AggregatorOptions
	// Peer are the --peer-* flags of the mixed version proxy.
	Peer PeerOptions
	// Leadership are the --coordinated-leadership-* flags.
	Leadership LeadershipOptions
}

// KubeletOptions are how capstan would reach kubelets.
type KubeletOptions struct {
	PreferredAddressTypes                     []string
	Port, ReadOnlyPort                        uint
	Timeout                                   time.Duration
	ClientCertificate, ClientKey, Certificate string
}

// clientConfig is the kubelet client's configuration.
func (o *KubeletOptions) clientConfig() kubeletclient.Config {
	return kubeletclient.Config{Port: o.Port, PreferredAddressTypes: o.PreferredAddressTypes,
		CertFile: o.ClientCertificate, KeyFile: o.ClientKey, CAFile: o.Certificate, Timeout: o.Timeout}
}

// ProxyClientOptions is the client certificate capstan presents when it
// calls out on a request's behalf (aggregated servers, webhooks).
type ProxyClientOptions struct{ CertFile, KeyFile string }

// AggregatorOptions are the aggregator's routing flags.
type AggregatorOptions struct {
	Routing                  bool
	RejectForwardingRedirect bool
}

// PeerOptions are the mixed version proxy's flags.
type PeerOptions struct {
	CAFile, AdvertiseIP, AdvertisePort string
}

// LeadershipOptions time the coordinated leader election leases.
type LeadershipOptions struct {
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// NewMiscOptions returns kube-apiserver's defaults.
func NewMiscOptions() MiscOptions {
	return MiscOptions{
		EventTTL: time.Hour, Services: NewServiceOptions(), EndpointReconcilerType: "lease", APIServerCount: 1,
		Kubelet: KubeletOptions{PreferredAddressTypes: []string{"Hostname", "InternalDNS", "InternalIP", "ExternalDNS", "ExternalIP"},
			Port: 10250, ReadOnlyPort: 10255, Timeout: 5 * time.Second},
		Aggregator: AggregatorOptions{RejectForwardingRedirect: true},
		Leadership: LeadershipOptions{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second},
	}
}

// AddFlags registers the section's flags, in kube's order.
func (o *MiscOptions) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.EventTTL, "event-ttl", o.EventTTL, "Amount of time to retain events.")
	fs.BoolVar(&o.EnableLogsHandler, "enable-logs-handler", o.EnableLogsHandler, "If true, install a /logs handler for the apiserver logs.")
	fs.Int64Var(&o.MaxConnectionBytesPerSec, "max-connection-bytes-per-sec", o.MaxConnectionBytesPerSec, "If non-zero, throttle each user connection to this number of bytes/sec. "+
		"Currently only applies to long-running requests.")
	fs.StringVar(&o.ProxyClient.CertFile, "proxy-client-cert-file", o.ProxyClient.CertFile, "Client certificate capstan presents when it calls out on a request's behalf "+
		"(aggregated API servers, admission webhooks). It should be signed by the CA of --requestheader-client-ca-file.")
	fs.StringVar(&o.ProxyClient.KeyFile, "proxy-client-key-file", o.ProxyClient.KeyFile, "Private key of --proxy-client-cert-file.")
	fs.StringVar(&o.Peer.CAFile, "peer-ca-file", o.Peer.CAFile, "If set and the UnknownVersionInteroperabilityProxy feature gate is enabled, "+
		"this file will be used to verify serving certificates of peer kube-apiservers.")
	fs.StringVar(&o.Peer.AdvertiseIP, "peer-advertise-ip", o.Peer.AdvertiseIP, "If set and the UnknownVersionInteroperabilityProxy feature gate is enabled, "+
		"this IP will be used by peer kube-apiservers to proxy requests to this kube-apiserver.")
	fs.StringVar(&o.Peer.AdvertisePort, "peer-advertise-port", o.Peer.AdvertisePort, "If set and the UnknownVersionInteroperabilityProxy feature gate is enabled, "+
		"this port will be used by peer kube-apiservers to proxy requests to this kube-apiserver.")
	fs.BoolVar(&o.Aggregator.Routing, "enable-aggregator-routing", o.Aggregator.Routing, "Turns on aggregator routing requests to endpoints IP rather than cluster IP.")
	fs.BoolVar(&o.Aggregator.RejectForwardingRedirect, "aggregator-reject-forwarding-redirect", o.Aggregator.RejectForwardingRedirect, "Aggregator reject forwarding redirect response back to client.")
	fs.DurationVar(&o.Leadership.LeaseDuration, "coordinated-leadership-lease-duration", o.Leadership.LeaseDuration, "The duration of the lease used for Coordinated Leader Election.")
	fs.DurationVar(&o.Leadership.RenewDeadline, "coordinated-leadership-renew-deadline", o.Leadership.RenewDeadline, "The deadline for renewing a coordinated leader election lease.")
	fs.DurationVar(&o.Leadership.RetryPeriod, "coordinated-leadership-retry-period", o.Leadership.RetryPeriod, "The period for retrying to renew a coordinated leader election lease.")
	fs.BoolVar(&o.AllowPrivileged, "allow-privileged", o.AllowPrivileged, "If true, allow privileged containers. [default=false]")
	fs.StringVar(&o.EndpointReconcilerType, "endpoint-reconciler-type", o.EndpointReconcilerType, "Use an endpoint reconciler (master-count, lease, none) "+
		"master-count is deprecated, and will be removed in a future version.")
	fs.IntVar(&o.KubernetesServiceNodePort, "kubernetes-service-node-port", o.KubernetesServiceNodePort, "If non-zero, the kubernetes Service the apiserver keeps "+
		"is of type NodePort, with this node port. If zero, it is of type ClusterIP.")
	o.Services.AddFlags(fs)
	fs.StringSliceVar(&o.Kubelet.PreferredAddressTypes, "kubelet-preferred-address-types", o.Kubelet.PreferredAddressTypes, "List of the preferred NodeAddressTypes to use for kubelet connections.")
	fs.UintVar(&o.Kubelet.Port, "kubelet-port", o.Kubelet.Port, "DEPRECATED: kubelet port.")
	_ = fs.MarkDeprecated("kubelet-port", "kubelet-port is deprecated and will be removed.")
	fs.UintVar(&o.Kubelet.ReadOnlyPort, "kubelet-read-only-port", o.Kubelet.ReadOnlyPort, "DEPRECATED: kubelet read only port.")
	_ = fs.MarkDeprecated("kubelet-read-only-port", "kubelet-read-only-port is deprecated and will be removed.")
	fs.DurationVar(&o.Kubelet.Timeout, "kubelet-timeout", o.Kubelet.Timeout, "Timeout for kubelet operations.")
	fs.StringVar(&o.Kubelet.ClientCertificate, "kubelet-client-certificate", o.Kubelet.ClientCertificate, "Path to a client cert file for TLS.")
	fs.StringVar(&o.Kubelet.ClientKey, "kubelet-client-key", o.Kubelet.ClientKey, "Path to a client key file for TLS.")
	fs.StringVar(&o.Kubelet.Certificate, "kubelet-certificate-authority", o.Kubelet.Certificate, "Path to a cert file for the certificate authority.")
	fs.IntVar(&o.APIServerCount, "apiserver-count", o.APIServerCount, "The number of apiservers running in the cluster, must be a positive number. "+
		"(In use when --endpoint-reconciler-type=master-count is enabled.)")
	_ = fs.MarkDeprecated("apiserver-count", "apiserver-count is deprecated and will be removed in a future version.")
}

// Validate reports kube's errors for the section, and capstan's for values
// that ask for what capstan does not do yet.
func (o *MiscOptions) Validate() error {
	var errs []error
	if !slices.Contains([]string{"lease", "none", "master-count"}, o.EndpointReconcilerType) {
		errs = append(errs, fmt.Errorf("--endpoint-reconciler-type %q is not one of lease, none, master-count", o.EndpointReconcilerType))
	}
	if o.EndpointReconcilerType == "master-count" {
		errs = append(errs, errors.New("--endpoint-reconciler-type=master-count: capstan implements lease and none"))
	}
	if o.APIServerCount <= 0 {
		errs = append(errs, fmt.Errorf("--apiserver-count should be a positive number, but value '%d' provided", o.APIServerCount))
	}
	if o.KubernetesServiceNodePort != 0 {
		errs = append(errs, errors.New("--kubernetes-service-node-port: capstan keeps the kubernetes Service of type ClusterIP only"))
	}
	if o.EnableLogsHandler {
		errs = append(errs, errors.New("--enable-logs-handler: capstan has no /logs handler"))
	}
	if (o.ProxyClient.CertFile == "") != (o.ProxyClient.KeyFile == "") {
		errs = append(errs, errors.New("--proxy-client-cert-file and --proxy-client-key-file must be given together"))
	}
	if err := checkReadable("--proxy-client-cert-file", o.ProxyClient.CertFile, "--proxy-client-key-file", o.ProxyClient.KeyFile,
		"--kubelet-client-certificate", o.Kubelet.ClientCertificate, "--kubelet-client-key", o.Kubelet.ClientKey,
		"--kubelet-certificate-authority", o.Kubelet.Certificate, "--peer-ca-file", o.Peer.CAFile); err != nil {
		errs = append(errs, err)
	}
	for _, t := range o.Kubelet.PreferredAddressTypes {
		if !slices.Contains([]string{"Hostname", "InternalDNS", "InternalIP", "ExternalDNS", "ExternalIP"}, t) {
			errs = append(errs, fmt.Errorf("--kubelet-preferred-address-types: unsupported address type %q", t))
		}
	}
	if o.Peer.AdvertiseIP != "" || o.Peer.AdvertisePort != "" || o.Peer.CAFile != "" {
		errs = append(errs, errors.New("--peer-*: capstan has no mixed version proxy (UnknownVersionInteroperabilityProxy)"))
	}
	errs = append(errs, o.Services.Validate())
	return errors.Join(errs...)
}

// checkReadable checks pairs of flag name and file path: each path given
// must be a readable file, so that a typo fails the start rather than the
// first request that needs it.
func checkReadable(pairs ...string) error {
	var errs []error
	for i := 0; i+1 < len(pairs); i += 2 {
		if path := pairs[i+1]; path != "" {
			if err := readable(path); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", pairs[i], err))
			}
		}
	}
	return errors.Join(errs...)
}

// joinQuoted lists names as kube lists them in messages.
func joinQuoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
