package pki

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"time"
)

// The admin client certificate's subject: a member of system:masters, which
// RBAC's cluster-admin binding lets do anything.
const (
	AdminUser  = "admin"
	AdminGroup = "system:masters"
)

// ensureGenerated makes sure that the CA, the serving pair (unless serving
// is somebody else's) and the admin pair exist and are fresh.
func ensureGenerated(opts ServingOptions, serving *keyPair, certFile, keyFile string) (ServingCerts, error) {
	now, log := opts.clock()(), opts.logger()
	pkiDir := filepath.Join(opts.DataDir, "pki")
	caFile, caKeyFile := filepath.Join(pkiDir, CACertName), filepath.Join(pkiDir, CAKeyName)
	ca, err := readPairIfExists(caFile, caKeyFile)
	if err != nil {
		return ServingCerts{}, fmt.Errorf("reading the capstan CA: %w", err)
	}
	if serving != nil && !signedBy(serving.cert, ca) {
		return useExisting(certFile, keyFile) // not ours: envtest's, or the user's
	}
	if ca == nil || expiresSoon(ca.cert, now) {
		if ca, err = newCA(now); err != nil {
			return ServingCerts{}, err
		}
		if err := writePair(ca, caFile, caKeyFile); err != nil {
			return ServingCerts{}, err
		}
		log.Info("generated CA", "cert", caFile, "key", caKeyFile)
	}

	dns, ips := opts.SANs()
	if serving == nil || !signedBy(serving.cert, ca) || !covers(serving.cert, dns, ips) || expiresSoon(serving.cert, now) {
		spec := leafSpec{
			subject: pkix.Name{CommonName: "capstan-apiserver"},
			usage:   x509.ExtKeyUsageServerAuth,
			dns:     dns,
			ips:     ips,
		}
		if serving, err = issue(ca, spec, now); err != nil {
			return ServingCerts{}, err
		}
		if err := writePair(serving, certFile, keyFile); err != nil {
			return ServingCerts{}, err
		}
		log.Info("generated serving certificate", "cert", certFile, "key", keyFile, "dns", dns, "ips", ips)
	}

	adminFile, adminKeyFile := filepath.Join(pkiDir, AdminCertName), filepath.Join(pkiDir, AdminKeyName)
	if err := ensureAdmin(ca, adminFile, adminKeyFile, now, log); err != nil {
		return ServingCerts{}, err
	}
	return generatedResult(ca, certFile, keyFile, caFile, caKeyFile, adminFile, adminKeyFile)
}

// ensureAdmin issues the admin client pair unless a fresh one signed by ca
// is already there.
func ensureAdmin(ca *keyPair, certFile, keyFile string, now time.Time, log *slog.Logger) error {
	admin, err := readPairIfExists(certFile, keyFile)
	if err != nil {
		// Only capstan writes this pair and nothing else depends on it:
		// replace it rather than refuse to start.
		log.Warn("replacing unreadable admin client certificate", "err", err)
		admin = nil
	}
	if admin != nil && signedBy(admin.cert, ca) && !expiresSoon(admin.cert, now) &&
		admin.cert.Subject.CommonName == AdminUser && slices.Contains(admin.cert.Subject.Organization, AdminGroup) {
		return nil
	}
	spec := leafSpec{
		subject: pkix.Name{CommonName: AdminUser, Organization: []string{AdminGroup}},
		usage:   x509.ExtKeyUsageClientAuth,
	}
	if admin, err = issue(ca, spec, now); err != nil {
		return err
	}
	if err := writePair(admin, certFile, keyFile); err != nil {
		return err
	}
	log.Info("generated admin client certificate", "cert", certFile, "key", keyFile)
	return nil
}

func generatedResult(ca *keyPair, certFile, keyFile, caFile, caKeyFile, adminFile, adminKeyFile string) (ServingCerts, error) {
	r, err := newReloader(certFile, keyFile)
	if err != nil {
		return ServingCerts{}, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	return ServingCerts{
		CertFile:      certFile,
		KeyFile:       keyFile,
		Generated:     true,
		CAFile:        caFile,
		CAKeyFile:     caKeyFile,
		CAPEM:         encodeCert(ca.cert.Raw),
		ClientCAs:     pool,
		AdminCertFile: adminFile,
		AdminKeyFile:  adminKeyFile,
		cert:          r,
	}, nil
}

func (opts ServingOptions) clock() func() time.Time {
	if opts.Now != nil {
		return opts.Now
	}
	return time.Now
}

func (opts ServingOptions) logger() *slog.Logger {
	if opts.Log != nil {
		return opts.Log
	}
	return slog.New(slog.DiscardHandler)
}
