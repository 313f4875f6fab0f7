// Package elected runs control loops on one replica of several: the one
// holding a coordination.k8s.io Lease, as kube-controller-manager runs its
// loops under leader election. It campaigns with client-go's leaderelection
// (a client library); while this replica leads, the loops run with a
// context that ends when leadership is lost, and it campaigns again.
//
// A replica that stops cleanly gives the lease up, so the next one takes
// over at its next retry; one that dies is replaced once its lease has
// expired. A lone server with no lease in storage leads at its first try.
package elected

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	"github.com/capstan-io/capstan/metrics"
)

// kube-controller-manager's default timing (its --leader-elect-* flags).
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// Config is the lease campaigned for.
type Config struct {
	Client kubernetes.Interface
	// Namespace and Name name the Lease.
	Namespace, Name string
	// Identity is this replica's holder identity: unique per process.
	Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod are the defaults above
	// unless set.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	Logger                                    *slog.Logger
}

// Identity is a holder identity as kube-controller-manager makes it: the
// host name and a UUID, unique per process.
func Identity() string {
	host, err := os.Hostname()
	if err != nil {
		host = "capstan"
	}
	return host + "_" + string(uuid.NewUUID())
}

// Run campaigns until ctx ends. Each time this replica wins, lead runs
// with a context that ends when leadership is lost or ctx ends; lead
// returns once it has started its loops. On ctx's end a held lease is
// given up.
func Run(ctx context.Context, c Config, lead func(ctx context.Context)) {
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: c.Namespace, Name: c.Name},
		Client:     c.Client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: c.Identity},
	}
	cfg := leaderelection.LeaderElectionConfig{
		Lock: lock, Name: c.Name, ReleaseOnCancel: true,
		LeaseDuration: or(c.LeaseDuration, DefaultLeaseDuration),
		RenewDeadline: or(c.RenewDeadline, DefaultRenewDeadline),
		RetryPeriod:   or(c.RetryPeriod, DefaultRetryPeriod),
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(lctx context.Context) {
				c.Logger.Debug("leading: starting the elected control loops", "lease", c.Namespace+"/"+c.Name, "identity", c.Identity)
				metrics.LeaderElection(c.Name, true)
				// The loops log through this server's logger too, at
				// their own levels.
				lead(klog.NewContext(lctx, logr.FromSlogHandler(c.Logger.Handler())))
			},
			OnStoppedLeading: func() { metrics.LeaderElection(c.Name, false) },
		},
	}
	// client-go's elector logs through the logger of the context it is
	// given: capstan's own, one per server (klog's global one is shared by
	// every server of a process). Its lines, at klog's level 0 in
	// kube-controller-manager, are debug lines here: a lone server's
	// campaign is not news.
	ctx = klog.NewContext(ctx, logr.FromSlogHandler(c.Logger.Handler()).V(4))
	for ctx.Err() == nil {
		le, err := leaderelection.NewLeaderElector(cfg)
		if err != nil { // only a configuration error: durations out of order
			c.Logger.Error("leader election", "err", err)
			return
		}
		le.Run(ctx)
		if ctx.Err() == nil {
			c.Logger.Warn("lost the leadership of the elected control loops; campaigning again", "lease", c.Namespace+"/"+c.Name)
		}
	}
}

func or(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
