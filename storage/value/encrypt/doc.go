// Package encrypt holds the ciphers of encryption at rest, each writing
// kube-apiserver's format so that either server reads the other's values:
// AES-CBC (IV + PKCS#7 padded blocks), AES-GCM (nonce + sealed data, the
// etcd key authenticated), XSalsa20-Poly1305 secretbox (nonce + box), and
// the extended-nonce AES-GCM of KMS v2 data keys (info + AES-GCM under a
// key derived from a seed with HKDF-SHA256).
package encrypt
