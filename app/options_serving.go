package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"
)

// ServingOptions are kube's "secure serving" section: where and how HTTPS
// is served.
type ServingOptions struct {
	BindAddress net.IP
	SecurePort  int
	CertDir     string
	TLSCertFile string
	TLSKeyFile  string
	// TLS are --tls-min-version, --tls-cipher-suites, --tls-curve-preferences and --tls-sni-cert-key.
	TLS             TLSOptions
	HTTP2MaxStreams int
	DisableHTTP2    bool
	// PermitPortSharing and PermitAddressSharing set SO_REUSEPORT and
	// SO_REUSEADDR on the listener.
	PermitPortSharing    bool
	PermitAddressSharing bool
}

// NewServingOptions returns kube's defaults.
func NewServingOptions() ServingOptions {
	return ServingOptions{BindAddress: net.IPv4zero, SecurePort: 6443}
}

// AddFlags registers the section's flags.
func (o *ServingOptions) AddFlags(fs *pflag.FlagSet) {
	fs.IPVar(&o.BindAddress, "bind-address", o.BindAddress, "The IP address on which to listen for the --secure-port port. "+
		"If blank or an unspecified address (0.0.0.0 or ::), all interfaces and IP address families will be used.")
	fs.IntVar(&o.SecurePort, "secure-port", o.SecurePort, "The port on which to serve HTTPS with authentication and authorization. 0 picks a free port.")
	fs.BoolVar(&o.DisableHTTP2, "disable-http2-serving", o.DisableHTTP2, "If true, HTTP2 serving will be disabled [default=false]")
	fs.StringVar(&o.CertDir, "cert-dir", o.CertDir, "The directory where the TLS certs are located (apiserver.crt, apiserver.key); "+
		"without them capstan generates them there. Defaults to <data-dir>/pki. Ignored if --tls-cert-file and --tls-private-key-file are given.")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", o.TLSCertFile, "File containing the default x509 serving certificate for HTTPS (CA certificates, if any, after it).")
	fs.StringVar(&o.TLSKeyFile, "tls-private-key-file", o.TLSKeyFile, "File containing the default x509 private key matching --tls-cert-file.")
	o.TLS.AddFlags(fs)
	fs.IntVar(&o.HTTP2MaxStreams, "http2-max-streams-per-connection", o.HTTP2MaxStreams, "The limit that the server gives to clients for the maximum number of streams in an HTTP/2 connection. "+
		"Zero means 100, as kube-apiserver.")
	fs.BoolVar(&o.PermitPortSharing, "permit-port-sharing", o.PermitPortSharing, "If true, SO_REUSEPORT will be used when binding the port, "+
		"which allows more than one instance to bind on the same address and port. [default=false]")
	fs.BoolVar(&o.PermitAddressSharing, "permit-address-sharing", o.PermitAddressSharing, "If true, SO_REUSEADDR will be used when binding the port. "+
		"This allows binding to wildcard IPs like 0.0.0.0 and specific IPs in parallel, and it avoids waiting for the kernel to release sockets in TIME_WAIT state. [default=false]")
}

// Validate reports what is wrong with the section.
func (o *ServingOptions) Validate() error {
	var errs []error
	if o.SecurePort < 0 || o.SecurePort > 65535 {
		errs = append(errs, fmt.Errorf("--secure-port %v must be between 1 and 65535, inclusive. It cannot be turned off with 0", o.SecurePort))
	}
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		errs = append(errs, errors.New("--tls-cert-file and --tls-private-key-file must be given together"))
	}
	if o.HTTP2MaxStreams < 0 {
		errs = append(errs, errors.New("--http2-max-streams-per-connection can not be negative value"))
	}
	errs = append(errs, o.TLS.Validate())
	return errors.Join(errs...)
}

// listen binds the secure port, sharing it as the flags allow.
func (o *ServingOptions) listen(ctx context.Context) (net.Listener, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			if o.PermitPortSharing {
				serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
			}
			if serr == nil && o.PermitAddressSharing {
				serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
			}
		})
		return errors.Join(err, serr)
	}}
	l, err := lc.Listen(ctx, "tcp", net.JoinHostPort(o.BindAddress.String(), strconv.Itoa(o.SecurePort)))
	if err != nil {
		return nil, fmt.Errorf("listening on --secure-port: %w", err)
	}
	return l, nil
}
