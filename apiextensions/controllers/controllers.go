// Package controllers holds the controllers that move CustomResourceDefinitions
// through their life, as kube's apiextensions-apiserver does:
//
//   - naming reserves each CRD's names within its group and reports
//     conflicts in the NamesAccepted condition;
//   - establishing makes a CRD Established once its names are accepted
//     (in a single server, naming does so in the same write when the
//     server can serve the CRD before the write: Config.Serve);
//   - finalizer deletes the custom resources of a deleted CRD, then removes
//     its customresourcecleanup finalizer.
//
// They share one informer on CRDs (the server's own, in-process, or one of
// theirs) and write through the API server's loopback client.
package controllers

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// DefaultResyncPeriod is how often the informer replays every CRD to the
// controllers, as kube's apiextensions informers do.
const DefaultResyncPeriod = 5 * time.Minute

// workers is how many workers each controller runs.
const workers = 8

// HAEstablishDelay is kube's delay before a CRD is Established when several
// API servers run: each has time to start serving the resource first.
const HAEstablishDelay = 5 * time.Second

// Config holds what the controllers need.
type Config struct {
	// Loopback reaches the API server as a privileged user.
	Loopback *rest.Config
	Logger   *slog.Logger
	// EstablishDelay delays Established after the names are accepted:
	// zero for a single server, HAEstablishDelay for several.
	EstablishDelay time.Duration
	// ResyncPeriod replays every CRD periodically; zero means
	// DefaultResyncPeriod.
	ResyncPeriod time.Duration
	// Informer, when set, is the informer on CRDs the controllers share,
	// run by its owner: the server's own, so that the CRDs are held once
	// and no second watch of them goes through the loopback client. It
	// must index the CRDs by group with IndexByGroup under GroupIndex.
	// Unset, the controllers run their own over the loopback client.
	Informer cache.SharedIndexInformer
	// Instances, when set, tells the finalizer whether a deleted CRD's
	// resource has objects in storage, without building its endpoints:
	// one with none is finalized without a list through the server.
	Instances Instances
	// Serve, when set and EstablishDelay is zero, lets the naming
	// controller write Established along with NamesAccepted: one status
	// write instead of two (kube writes Established False, Installing,
	// first). It is called before that write with the CRD as it will be
	// stored, which it must not change, so that the server serves the
	// resource by the time a client can see the CRD Established; the
	// func it returns is called after the write with whether it went
	// through.
	Serve func(crd *apiextv1.CustomResourceDefinition) (done func(written bool))
}

// Instances tells whether a resource has objects in storage.
type Instances interface {
	HasObjects(ctx context.Context, gr schema.GroupResource) (bool, error)
}

// Run starts the naming, establishing and finalizer controllers of a single
// server on the loopback client config and returns once they are started;
// they stop when ctx is done.
func Run(ctx context.Context, loopback *rest.Config, logger *slog.Logger) error {
	return Start(ctx, Config{Loopback: loopback, Logger: logger})
}

// Start is Run with every option: it starts the controllers and returns
// once they are started; they stop when ctx is done.
func Start(ctx context.Context, cfg Config) error {
	if cfg.Loopback == nil || cfg.Logger == nil {
		return errors.New("CRD controllers: Loopback and Logger are required")
	}
	if cfg.ResyncPeriod == 0 {
		cfg.ResyncPeriod = DefaultResyncPeriod
	}
	client, err := newCRDClient(cfg.Loopback)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg.Loopback)
	if err != nil {
		return err
	}
	informer, own := cfg.Informer, false
	if informer == nil {
		informer, own = newCRDInformer(client, cfg.ResyncPeriod), true
	}
	naming, err := newNamingController(client, informer, cfg.Logger)
	if err != nil {
		return err
	}
	if cfg.EstablishDelay == 0 {
		naming.serve = cfg.Serve
	}
	establishing, err := newEstablishingController(client, informer, cfg.EstablishDelay, cfg.Logger)
	if err != nil {
		return err
	}
	finalizer, err := newFinalizerController(client, dyn, informer, cfg.Logger)
	if err != nil {
		return err
	}
	finalizer.instances = cfg.Instances

	go func() {
		var wg sync.WaitGroup
		defer wg.Wait()
		defer func() {
			for _, l := range []*queueLoop{naming.queueLoop, establishing.queueLoop, finalizer.queueLoop} {
				l.queue.ShutDown()
			}
		}()
		if own {
			wg.Go(func() { informer.RunWithContext(ctx) })
		}
		if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
			return
		}
		// Each worker waits on one write to the server: several keep
		// many new CRDs moving (names are reserved one CRD of a group
		// at a time).
		naming.run(ctx, &wg, workers)
		establishing.run(ctx, &wg, workers)
		finalizer.run(ctx, &wg, workers)
		<-ctx.Done()
	}()
	return nil
}
