package app

import (
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/capstan-io/capstan/pki"
)

// TLSOptions are the flags that shape TLS serving beyond the default
// certificate, with kube-apiserver's names and values.
type TLSOptions struct {
	// MinVersion is --tls-min-version: VersionTLS10 ... VersionTLS13.
	MinVersion string
	// CipherSuites is --tls-cipher-suites, by Go's (and kube's) names.
	CipherSuites []string
	// CurvePreferences is --tls-curve-preferences: Go's numeric CurveIDs.
	CurvePreferences []int32
	// SNICertKeys is --tls-sni-cert-key, once per pair.
	SNICertKeys []string
}

// tlsVersions are --tls-min-version's values.
var tlsVersions = map[string]uint16{
	"VersionTLS10": tls.VersionTLS10,
	"VersionTLS11": tls.VersionTLS11,
	"VersionTLS12": tls.VersionTLS12,
	"VersionTLS13": tls.VersionTLS13,
}

// AddFlags registers the flags.
func (o *TLSOptions) AddFlags(fs *pflag.FlagSet) {
	versions := make([]string, 0, len(tlsVersions))
	for v := range tlsVersions {
		versions = append(versions, v)
	}
	slices.Sort(versions)
	fs.StringVar(&o.MinVersion, "tls-min-version", o.MinVersion, "Minimum TLS version supported (default VersionTLS12). Possible values: "+strings.Join(versions, ", ")+".")
	fs.StringSliceVar(&o.CipherSuites, "tls-cipher-suites", o.CipherSuites, "Comma-separated list of cipher suites for TLS 1.0 to 1.2 (TLS 1.3 suites are not configurable); Go's secure defaults when omitted. "+
		"Preferred values: "+strings.Join(suiteNames(tls.CipherSuites()), ", ")+". Insecure values: "+strings.Join(suiteNames(tls.InsecureCipherSuites()), ", ")+".")
	fs.Int32SliceVar(&o.CurvePreferences, "tls-curve-preferences", o.CurvePreferences, "Comma-separated list of numeric Go crypto/tls CurveID values: the key exchanges the server allows, "+
		"in order of preference (see https://pkg.go.dev/crypto/tls#CurveID). Go's defaults when omitted.")
	fs.StringArrayVar(&o.SNICertKeys, "tls-sni-cert-key", o.SNICertKeys, "A certificate and key file served to clients that ask for one of its server names (SNI), as certfile,keyfile "+
		"optionally followed by :name1,name2 (names may start with a *. wildcard label or be IP addresses the clients dial). Without names, the certificate's own names are used. "+
		"Exact names beat wildcards, given names beat the certificate's, and earlier flags beat later ones. Repeat the flag for more pairs; files are read again when they change. "+
		`Examples: "example.crt,example.key" or "foo.crt,foo.key:*.foo.com,foo.com".`)
	showAs(fs, "tls-sni-cert-key", "namedCertKey")
}

// Validate reports what is wrong with the flags.
func (o *TLSOptions) Validate() error {
	_, err := o.config()
	return err
}

// tlsConfig is what the flags say, checked.
type tlsConfig struct {
	minVersion   uint16
	cipherSuites []uint16
	curves       []tls.CurveID
	sni          []pki.SNICertKey
}

func (o *TLSOptions) config() (tlsConfig, error) {
	var c tlsConfig
	var errs []error
	if o.MinVersion != "" {
		v, ok := tlsVersions[o.MinVersion]
		if !ok {
			errs = append(errs, fmt.Errorf("--tls-min-version: unknown tls version %q", o.MinVersion))
		}
		c.minVersion = v
	}
	for _, name := range o.CipherSuites {
		id, ok := cipherSuiteID(name)
		if !ok {
			errs = append(errs, fmt.Errorf("--tls-cipher-suites: cipher suite %s not supported or doesn't exist", name))
		}
		c.cipherSuites = append(c.cipherSuites, id)
	}
	for i, id := range o.CurvePreferences {
		switch curve := tls.CurveID(id); {
		case id <= 0 || id > math.MaxUint16:
			errs = append(errs, fmt.Errorf("--tls-curve-preferences: curve preference %d is out of range (must be 1-%d)", id, math.MaxUint16))
		case slices.Contains(o.CurvePreferences[:i], id):
			errs = append(errs, fmt.Errorf("--tls-curve-preferences: duplicate curve preference %d", id))
		case strings.HasPrefix(curve.String(), "CurveID("):
			errs = append(errs, fmt.Errorf("--tls-curve-preferences: curve preference %d is not supported by the current Go version", id))
		default:
			c.curves = append(c.curves, curve)
		}
	}
	for _, v := range o.SNICertKeys {
		s, err := pki.ParseSNICertKey(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("--tls-sni-cert-key %w", err))
		}
		c.sni = append(c.sni, s)
	}
	return c, errors.Join(errs...)
}

func cipherSuiteID(name string) (uint16, bool) {
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		if s.Name == name {
			return s.ID, true
		}
	}
	return 0, false
}

func suiteNames(suites []*tls.CipherSuite) []string {
	var names []string
	for _, s := range suites {
		names = append(names, s.Name)
	}
	return names
}
