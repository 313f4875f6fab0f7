package app

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"
)

// CapstanOptions are capstan's own flags, which kube-apiserver has not.
type CapstanOptions struct {
	DataDir             string
	MaxRequestBodyBytes int64
	// UnsafeNoFsync makes the embedded etcd skip fsync: for tests only.
	UnsafeNoFsync bool
}

// NewCapstanOptions returns the defaults.
func NewCapstanOptions() CapstanOptions {
	return CapstanOptions{DataDir: "capstan-data", MaxRequestBodyBytes: 3 * 1024 * 1024}
}

// AddFlags registers the section's flags.
func (o *CapstanOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DataDir, "data-dir", o.DataDir, "Directory for the embedded etcd data, the generated PKI and admin.kubeconfig.")
	fs.Int64Var(&o.MaxRequestBodyBytes, "max-resource-write-bytes", o.MaxRequestBodyBytes, "The largest request body accepted on writes (kube's fixed 3 MiB by default).")
	fs.BoolVar(&o.UnsafeNoFsync, "unsafe-no-fsync", o.UnsafeNoFsync, "Do not fsync the embedded etcd's writes (tests only: data may be lost on a crash).")
}

// Validate reports what is wrong with the section.
func (o *CapstanOptions) Validate() error {
	var errs []error
	if o.DataDir == "" {
		errs = append(errs, errors.New("--data-dir must not be empty"))
	}
	if o.MaxRequestBodyBytes < 0 {
		errs = append(errs, errors.New("--max-resource-write-bytes can not be negative value"))
	}
	return errors.Join(errs...)
}

// GlobalOptions is kube's "global" section: --version.
type GlobalOptions struct {
	// Version is --version: "false", "true" or "raw" (print and quit), or
	// a version for /version to report.
	Version versionFlag
}

// AddFlags registers --version.
func (o *GlobalOptions) AddFlags(fs *pflag.FlagSet) {
	f := fs.VarPF(&o.Version, "version", "", "--version, --version=raw prints version information and quits; --version=vX.Y.Z... sets the reported version")
	f.NoOptDefVal = "true"
}

// versionFlag is --version's value.
type versionFlag string

func (v *versionFlag) String() string {
	if *v == "" {
		return "false"
	}
	return string(*v)
}
func (v *versionFlag) Type() string { return "version" }
func (v *versionFlag) Set(s string) error {
	switch {
	case s == "true", s == "false", s == "raw", strings.HasPrefix(s, "v"):
		*v = versionFlag(s)
		return nil
	}
	return fmt.Errorf("invalid value %q: not a boolean, raw or a version", s)
}

// readable checks that path is a file capstan can read.
func readable(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return f.Close()
}
