package jwt

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/apis/apiserver"
)

// Watch reloads the file at path whenever its content changes, checking
// every interval until ctx ends; initial is the content a was built from
// and initialConfig its configuration. As kube, a new content that cannot
// be decoded or is invalid (or changes the anonymous section, which needs
// a restart) is logged and skipped until the file changes again; one whose
// issuers do not become healthy is retried.
func (a *Authenticator) Watch(ctx context.Context, path string, interval time.Duration, initial []byte, initialConfig *Config) {
	r := &reloader{a: a, path: path, tracked: initial, anonymous: initialConfig.Anonymous.DeepCopy()}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		switch reloaded, err := r.check(); {
		case err != nil:
			a.logError("reloading authentication config", err)
		case reloaded && a.opts.Logger != nil:
			a.opts.Logger.Info("reloaded authentication config", "path", path)
		}
	}
}

// reloader is the state of Watch: the content last acted on.
type reloader struct {
	a         *Authenticator
	path      string
	tracked   []byte
	anonymous *apiserver.AnonymousAuthConfig
}

// check reloads the file if its content changed: reloaded is true when the
// authenticator took the new configuration.
func (r *reloader) check() (reloaded bool, _ error) {
	data, err := os.ReadFile(r.path)
	if err != nil {
		return false, fmt.Errorf("failed to read authentication config file: %w", err) // retried
	}
	if bytes.Equal(data, r.tracked) {
		return false, nil
	}
	c, err := Decode(data)
	if err != nil {
		r.tracked = data // never valid: wait for the next change
		return false, fmt.Errorf("failed to load authentication config: %w", err)
	}
	errs := Validate(c, r.a.opts.DisallowedIssuers)
	if !reflect.DeepEqual(r.anonymous, c.Anonymous) {
		errs = append(errs, field.Forbidden(field.NewPath("anonymous"), "changed from initial configuration file"))
	}
	if len(errs) > 0 {
		r.tracked = data
		return false, fmt.Errorf("failed to validate authentication config: %w", errs.ToAggregate())
	}
	if err := r.a.Update(c); err != nil {
		return false, fmt.Errorf("failed to update authentication config: %w", err) // retried
	}
	r.tracked = data
	return true, nil
}

func (a *Authenticator) logError(msg string, err error) {
	if a.opts.Logger != nil {
		a.opts.Logger.Error(msg, "err", err)
	}
}
