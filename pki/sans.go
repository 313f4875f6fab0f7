package pki

import (
	"crypto/x509"
	"net"
	"strings"
)

// serviceDNSNames are the names of the kubernetes service in the default
// namespace, which kube-apiserver puts in its self-signed certificate.
var serviceDNSNames = []string{
	"kubernetes",
	"kubernetes.default",
	"kubernetes.default.svc",
	"kubernetes.default.svc.cluster.local",
}

// SANs returns the subject alternative names a generated serving certificate
// carries for opts: localhost, the loopback addresses, the kubernetes service
// names, the hostname, the advertise address and the extra names. A name
// that parses as an IP address counts as an IP address. Duplicates are
// dropped; order is stable.
func (opts ServingOptions) SANs() (dns []string, ips []net.IP) {
	seenDNS := map[string]bool{}
	seenIP := map[string]bool{}
	addIP := func(ip net.IP) {
		if ip == nil || ip.IsUnspecified() || seenIP[ip.String()] {
			return
		}
		seenIP[ip.String()] = true
		ips = append(ips, ip)
	}
	addName := func(name string) {
		name = strings.ToLower(strings.TrimSpace(name))
		if ip := net.ParseIP(name); ip != nil {
			addIP(ip)
			return
		}
		if name == "" || seenDNS[name] {
			return
		}
		seenDNS[name] = true
		dns = append(dns, name)
	}

	addName("localhost")
	addIP(net.IPv4(127, 0, 0, 1))
	addIP(net.IPv6loopback)
	for _, name := range serviceDNSNames {
		addName(name)
	}
	addName(opts.Hostname)
	addIP(opts.AdvertiseAddress)
	for _, ip := range opts.ExtraIPs {
		addIP(ip)
	}
	for _, name := range opts.ExtraDNS {
		addName(name)
	}
	return dns, ips
}

// covers reports whether cert names every DNS name and IP address given.
func covers(cert *x509.Certificate, dns []string, ips []net.IP) bool {
	have := map[string]bool{}
	for _, name := range cert.DNSNames {
		have[strings.ToLower(name)] = true
	}
	for _, name := range dns {
		if !have[name] {
			return false
		}
	}
	for _, ip := range ips {
		if !hasIP(cert.IPAddresses, ip) {
			return false
		}
	}
	return true
}

func hasIP(list []net.IP, ip net.IP) bool {
	for _, have := range list {
		if have.Equal(ip) {
			return true
		}
	}
	return false
}
