package app

import (
	"crypto/x509"
	"fmt"
	"os"
	"slices"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/controlplane"
	"github.com/capstan-io/capstan/pki"
)

// frontProxyConfig is the front proxy authenticator of --requestheader-*
// (nil without --requestheader-client-ca-file) and the headers to strip.
type frontProxyConfig struct {
	authenticator authn.Authenticator
	headers       authn.RequestHeaders
}

// frontProxy builds the front proxy authenticator and what the
// extension-apiserver-authentication ConfigMap publishes.
func frontProxy(o *Options, certs pki.ServingCerts) (frontProxyConfig, controlplane.ClusterAuthenticationTrust, error) {
	var trust controlplane.ClusterAuthenticationTrust
	var proxy frontProxyConfig
	if o.Authentication.ClientCAFile != "" {
		data, err := os.ReadFile(o.Authentication.ClientCAFile)
		if err != nil {
			return proxy, trust, fmt.Errorf("--client-ca-file: %w", err)
		}
		trust.ClientCA = data
	}
	trust.ClientCA = append(slices.Clone(trust.ClientCA), certs.CAPEM...)
	rh := o.Authentication.Authn.RequestHeader
	if rh.ClientCAFile == "" {
		return proxy, trust, nil
	}
	headers, err := rh.requestHeaders()
	if err != nil {
		return proxy, trust, err
	}
	// Read again when the file changes, as --client-ca-file is.
	bundle, err := pki.NewClientCABundle(rh.ClientCAFile, nil)
	if err != nil {
		return proxy, trust, fmt.Errorf("--requestheader-client-ca-file: %w", err)
	}
	if trust.RequestHeaderCA, err = os.ReadFile(rh.ClientCAFile); err != nil {
		return proxy, trust, fmt.Errorf("--requestheader-client-ca-file: %w", err)
	}
	trust.RequestHeaderAllowedNames = rh.AllowedNames
	trust.RequestHeaderUsernameHeaders, trust.RequestHeaderUIDHeaders = headers.Username, headers.UID
	trust.RequestHeaderGroupHeaders, trust.RequestHeaderExtraHeaderPrefixes = headers.Group, headers.ExtraPrefix
	proxy.headers = headers
	proxy.authenticator = authn.NewRequestHeader(headers, rh.AllowedNames, func() x509.VerifyOptions {
		return x509.VerifyOptions{Roots: bundle.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	})
	return proxy, trust, nil
}
