// Package apiserveridentity keeps this server's identity lease, as kube's
// start-kube-apiserver-identity-lease-controller does, and deletes the
// expired identity leases of servers that went away, as kube's
// apiserver lease garbage collector does on every replica.
//
// The lease is kube-system/apiserver-<hash>, the hash being that of the
// host name and the component ("kube-apiserver"), so that a server
// restarted on the same host takes over its lease; its holder is the
// lease name and a fresh UUID per process. Clients (kubectl, operators)
// count the servers of a cluster by these leases.
package apiserveridentity

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"log/slog"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"golang.org/x/crypto/cryptobyte"
)

// kube's identity lease settings (k8s.io/kubernetes pkg/controlplane/apiserver).
const (
	// LabelKey marks a lease as an API server's identity; its value is
	// the component.
	LabelKey = "apiserver.kubernetes.io/identity"
	// Component is the label value and the hashed component name.
	Component = "kube-apiserver"
	// LeaseDuration is how long a lease lives without renewal.
	LeaseDuration = 3600 * time.Second
	// RenewInterval is how often a server renews its lease.
	RenewInterval = 10 * time.Second
	// GCPeriod is how often every server deletes expired leases.
	GCPeriod = 3600 * time.Second
)

// LeaseName is the identity lease name of a server on hostname, kube's
// "apiserver-" and the base32 of the first 16 bytes of the SHA-256 of
// the length-prefixed host name and component.
func LeaseName(hostname, component string) string {
	var b cryptobyte.Builder
	b.AddUint16LengthPrefixed(func(b *cryptobyte.Builder) { b.AddBytes([]byte(hostname)) })
	b.AddUint16LengthPrefixed(func(b *cryptobyte.Builder) { b.AddBytes([]byte(component)) })
	data, err := b.Bytes()
	if err != nil { // only past 64 KiB of host name
		data = []byte(hostname + "\x00" + component)
	}
	sum := sha256.Sum256(data)
	return "apiserver-" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:16]))
}

// Config is what the lease controller needs.
type Config struct {
	Client   kubernetes.Interface
	Hostname string
	// LeaseDuration and RenewInterval are kube's constants above unless
	// set (tests shorten them).
	LeaseDuration time.Duration
	RenewInterval time.Duration
	Logger        *slog.Logger
	// Now is the clock; time.Now unless set.
	Now func() time.Time
}

// Controller renews this server's identity lease.
type Controller struct {
	Config
	name, holder string
	// last is the lease as last written, updated without a read first;
	// nil after a failure, so that the next renewal reads it again.
	last *coordinationv1.Lease
}

// New returns the controller of the lease of c.Hostname.
func New(c Config) *Controller {
	if c.LeaseDuration == 0 {
		c.LeaseDuration = LeaseDuration
	}
	if c.RenewInterval == 0 {
		c.RenewInterval = RenewInterval
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	name := LeaseName(c.Hostname, Component)
	return &Controller{Config: c, name: name, holder: name + "_" + string(uuid.NewUUID())}
}

// Name is the lease's name, in kube-system.
func (c *Controller) Name() string { return c.name }

// Run renews the lease every RenewInterval until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := c.Renew(ctx); err != nil && ctx.Err() == nil {
			c.Logger.Warn("unable to renew the apiserver identity lease", "lease", c.name, "err", err)
		}
	}, c.RenewInterval)
}

// Renew creates the lease or moves its renew time to now.
func (c *Controller) Renew(ctx context.Context) error {
	leases := c.Client.CoordinationV1().Leases(metav1.NamespaceSystem)
	base := c.last
	if base == nil {
		cur, err := leases.Get(ctx, c.name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			created, err := leases.Create(ctx, c.leaseFrom(nil), metav1.CreateOptions{})
			c.last = created
			return err
		case err != nil:
			return err
		}
		base = cur
	}
	updated, err := leases.Update(ctx, c.leaseFrom(base), metav1.UpdateOptions{})
	if err != nil {
		c.last = nil
		return err
	}
	c.last = updated
	return nil
}

// leaseFrom is the lease to write: base (nil for a new one) with this
// server's duration, renew time and labels.
func (c *Controller) leaseFrom(base *coordinationv1.Lease) *coordinationv1.Lease {
	var l *coordinationv1.Lease
	if base == nil {
		holder := c.holder
		l = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: c.name, Namespace: metav1.NamespaceSystem},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder},
		}
	} else {
		l = base.DeepCopy()
	}
	seconds := int32(c.LeaseDuration / time.Second)
	l.Spec.LeaseDurationSeconds = &seconds
	l.Spec.RenewTime = &metav1.MicroTime{Time: c.Now()}
	if l.Labels == nil {
		l.Labels = map[string]string{}
	}
	l.Labels[LabelKey] = Component
	l.Labels[corev1.LabelHostname] = c.Hostname
	return l
}
