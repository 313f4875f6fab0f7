package auth

import "crypto/tls"

// insecureTLS is for the anonymous requests of the tests: they present no
// certificate, and check the server's status codes, not its identity.
func insecureTLS() *tls.Config {
	return &tls.Config{InsecureSkipVerify: true} //nolint:gosec // test client
}
