package apiserveridentity

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// GC deletes expired identity leases.
type GC struct {
	Client kubernetes.Interface
	Period time.Duration // GCPeriod unless set
	Logger *slog.Logger
	Now    func() time.Time // time.Now unless set
}

// Run collects every Period until ctx ends, the first time at once.
func (g *GC) Run(ctx context.Context) {
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := g.Collect(ctx); err != nil && ctx.Err() == nil {
			g.Logger.Warn("unable to collect expired apiserver identity leases", "err", err)
		}
	}, cmp.Or(g.Period, GCPeriod))
}

// Collect deletes the identity leases that have expired. Each deletion is
// conditional on the version read, so that a lease renewed meanwhile by
// its server (or collected by another replica) stays.
func (g *GC) Collect(ctx context.Context) error {
	leases := g.Client.CoordinationV1().Leases(metav1.NamespaceSystem)
	list, err := leases.List(ctx, metav1.ListOptions{LabelSelector: LabelKey + "=" + Component})
	if err != nil {
		return err
	}
	now := time.Now
	if g.Now != nil {
		now = g.Now
	}
	var errs []error
	for i := range list.Items {
		l := &list.Items[i]
		if !Expired(l, now()) {
			continue
		}
		rv := l.ResourceVersion
		err := leases.Delete(ctx, l.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}})
		switch {
		case err == nil:
			g.Logger.Info("deleted an expired apiserver identity lease", "lease", l.Name)
		case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		default:
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Expired reports whether l has passed its renew time plus duration at
// now. A lease missing either is invalid and expired, as kube judges it.
func Expired(l *coordinationv1.Lease, now time.Time) bool {
	s := l.Spec
	return s.RenewTime == nil || s.LeaseDurationSeconds == nil ||
		s.RenewTime.Add(time.Duration(*s.LeaseDurationSeconds)*time.Second).Before(now)
}
