package controlplane

import (
	"context"
	"log/slog"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-io/capstan/controlplane/controllers/elected"
	"github.com/capstan-io/capstan/server"
)

// ControllersLease is the Lease in kube-system that the replicas of a
// cluster campaign for: its holder runs the elected loops.
const ControllersLease = "capstan-controllers"

// HAConfig is what several replicas of one cluster need.
type HAConfig struct {
	// Hostname names this server's identity lease (os.Hostname).
	Hostname string
	// NoLeaderElection runs the in-process loops on this replica
	// whatever the others do (--leader-elect=false).
	NoLeaderElection bool
	// LeaseDuration, RenewDeadline and RetryPeriod time the election;
	// kube-controller-manager's defaults when zero.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// electedLoops are the control loops kube runs in kube-controller-manager,
// which is leader-elected: capstan runs them on the replica holding
// ControllersLease only. Loops kube-apiserver runs on every replica
// (identity lease, the kubernetes Service, repairs, bootstrap data, CRD
// and APIService controllers) stay post-start hooks of every replica.
type electedLoops struct {
	ha     HAConfig
	logger *slog.Logger

	mu sync.Mutex // guards the fields below
	// loops are the registered loops, started on each new leadership.
	loops []namedLoop
	// lead is the context of the current leadership; nil while not leading.
	lead *server.HookContext
	// stop ends the campaign; done is closed once the lease is given up.
	stop context.CancelFunc
	done chan struct{}
}

type namedLoop struct {
	name string
	run  server.HookFunc
}

// hook is the post-start hook of the loop name: without election the loop
// itself, else a registration that starts it whenever this replica leads.
func (e *electedLoops) hook(name string, run server.HookFunc) server.HookFunc {
	if e.ha.NoLeaderElection {
		return run
	}
	return func(server.HookContext) error {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.loops = append(e.loops, namedLoop{name, run})
		if e.lead != nil {
			e.startLocked(namedLoop{name, run}, *e.lead)
		}
		return nil
	}
}

func (e *electedLoops) startLocked(l namedLoop, hc server.HookContext) {
	if err := l.run(hc); err != nil && hc.Err() == nil {
		e.logger.Warn("elected control loop did not start", "controller", l.name, "err", err)
	}
}

// campaign runs the election until hc ends or stopCampaign is called.
func (e *electedLoops) campaign(hc server.HookContext) error {
	client, err := kubernetes.NewForConfig(hc.LoopbackClientConfig)
	if err != nil {
		return err
	}
	ctx, stop := context.WithCancel(hc)
	e.mu.Lock()
	e.stop, e.done = stop, make(chan struct{})
	e.mu.Unlock()
	cfg := elected.Config{
		Client: client, Namespace: metav1.NamespaceSystem, Name: ControllersLease, Identity: elected.Identity(),
		LeaseDuration: e.ha.LeaseDuration, RenewDeadline: e.ha.RenewDeadline, RetryPeriod: e.ha.RetryPeriod,
		Logger: e.logger,
	}
	go func() {
		defer close(e.done)
		elected.Run(ctx, cfg, func(lctx context.Context) { e.leading(hc, lctx) })
	}()
	return nil
}

// leading starts every registered loop with the leadership's context,
// and forgets that context once leadership ends.
func (e *electedLoops) leading(hc server.HookContext, lctx context.Context) {
	lead := server.HookContext{Context: lctx, LoopbackClientConfig: hc.LoopbackClientConfig, HooksDone: hc.HooksDone}
	e.mu.Lock()
	e.lead = &lead
	for _, l := range e.loops {
		e.startLocked(l, lead)
	}
	e.mu.Unlock()
	<-lctx.Done()
	e.mu.Lock()
	e.lead = nil
	e.mu.Unlock()
}

// stopCampaign ends the campaign and waits (up to timeout) for a held
// lease to be given up, so that the next replica takes over at once
// rather than after the lease expires.
func (e *electedLoops) stopCampaign(timeout time.Duration) {
	e.mu.Lock()
	stop, done := e.stop, e.done
	e.mu.Unlock()
	if stop == nil {
		return
	}
	stop()
	select {
	case <-done:
	case <-time.After(timeout):
	}
}

// install adds the campaign's post-start and pre-shutdown hooks; the
// lease lives in kube-system, so the campaign starts once it exists.
func (e *electedLoops) install(s *server.Server, systemNamespaces <-chan struct{}) {
	if e.ha.NoLeaderElection {
		return
	}
	s.AddPostStartHook("start-controllers-leader-election", func(hc server.HookContext) error {
		if err := waitFor(hc, systemNamespaces); err != nil {
			return err
		}
		return e.campaign(hc)
	})
	s.AddPreShutdownHook("stop-controllers-leader-election", func(server.HookContext) error {
		e.stopCampaign(5 * time.Second)
		return nil
	})
}
