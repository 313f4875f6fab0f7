package pki

import (
	"crypto/x509"
	"net"
	"slices"
	"testing"
)

func TestSANs(t *testing.T) {
	base := []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
	tests := []struct {
		name    string
		opts    ServingOptions
		wantDNS []string
		wantIPs []string
	}{
		{
			name:    "defaults only",
			wantDNS: base,
			wantIPs: []string{"127.0.0.1", "::1"},
		},
		{
			name: "hostname, advertise address and extras",
			opts: ServingOptions{
				Hostname:         "Node-1",
				AdvertiseAddress: net.ParseIP("10.1.2.3"),
				ExtraIPs:         []net.IP{net.ParseIP("10.96.0.1")},
				ExtraDNS:         []string{"api.example.com"},
			},
			wantDNS: append(slices.Clone(base), "node-1", "api.example.com"),
			wantIPs: []string{"127.0.0.1", "::1", "10.1.2.3", "10.96.0.1"},
		},
		{
			name: "IP hostname, unspecified advertise address, duplicates",
			opts: ServingOptions{
				Hostname:         "192.168.0.7",
				AdvertiseAddress: net.IPv4zero,
				ExtraIPs:         []net.IP{net.ParseIP("127.0.0.1")},
				ExtraDNS:         []string{"localhost", "::1", ""},
			},
			wantDNS: base,
			wantIPs: []string{"127.0.0.1", "::1", "192.168.0.7"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dns, ips := tt.opts.SANs()
			if !slices.Equal(dns, tt.wantDNS) {
				t.Errorf("dns = %q, want %q", dns, tt.wantDNS)
			}
			var got []string
			for _, ip := range ips {
				got = append(got, ip.String())
			}
			if !slices.Equal(got, tt.wantIPs) {
				t.Errorf("ips = %q, want %q", got, tt.wantIPs)
			}
		})
	}
}

func TestCovers(t *testing.T) {
	cert := &x509.Certificate{
		DNSNames:    []string{"localhost", "Node-1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), net.ParseIP("10.0.0.5").To4()},
	}
	tests := []struct {
		name string
		dns  []string
		ips  []string
		want bool
	}{
		{"exact", []string{"localhost", "node-1"}, []string{"127.0.0.1", "::1", "10.0.0.5"}, true},
		{"subset", []string{"localhost"}, []string{"10.0.0.5"}, true},
		{"nothing asked", nil, nil, true},
		{"missing name", []string{"node-2"}, nil, false},
		{"missing IP", nil, []string{"10.0.0.6"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ips []net.IP
			for _, s := range tt.ips {
				ips = append(ips, net.ParseIP(s))
			}
			if got := covers(cert, tt.dns, ips); got != tt.want {
				t.Errorf("covers = %v, want %v", got, tt.want)
			}
		})
	}
}
