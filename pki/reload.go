package pki

import (
	"crypto/tls"
	"os"
	"sync"
	"time"
)

// reloader holds a certificate read from a pair of files and reads them again
// when either changes, so that a rotated certificate is served without a
// restart. A pair that does not load (say, the key was replaced but the
// certificate not yet) leaves the last good certificate in use.
type reloader struct {
	certFile, keyFile string

	mu    sync.Mutex // guards the fields below
	stamp pairStamp
	cert  *tls.Certificate
}

// pairStamp identifies one version of both files.
type pairStamp [2]fileStamp

type fileStamp struct {
	modTime time.Time
	size    int64
}

func newReloader(certFile, keyFile string) (*reloader, error) {
	r := &reloader{certFile: certFile, keyFile: keyFile}
	stamp := r.statPair()
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	r.stamp, r.cert = stamp, &cert
	return r, nil
}

func (r *reloader) current() (*tls.Certificate, error) {
	stamp := r.statPair()
	r.mu.Lock()
	defer r.mu.Unlock()
	if stamp == r.stamp {
		return r.cert, nil
	}
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return r.cert, nil
	}
	r.stamp, r.cert = stamp, &cert
	return r.cert, nil
}

func (r *reloader) statPair() pairStamp {
	return pairStamp{statFile(r.certFile), statFile(r.keyFile)}
}

func statFile(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{modTime: fi.ModTime(), size: fi.Size()}
}
