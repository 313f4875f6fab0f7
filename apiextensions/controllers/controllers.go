// Package controllers holds the controllers that move CustomResourceDefinitions
// through their life, as kube's apiextensions-apiserver does:
//
//   - naming reserves each CRD's names within its group and reports
//     conflicts in the NamesAccepted condition;
//   - establishing makes a CRD Established once its names are accepted;
//   - finalizer deletes the custom resources of a deleted CRD, then removes
//     its customresourcecleanup finalizer.
//
// They share one informer on CRDs and talk to the API server through its
// loopback client.
package controllers

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// DefaultResyncPeriod is how often the informer replays every CRD to the
// controllers, as kube's apiextensions informers do.
const DefaultResyncPeriod = 5 * time.Minute

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
	informer := newCRDInformer(client, cfg.ResyncPeriod)
	naming, err := newNamingController(client, informer, cfg.Logger)
	if err != nil {
		return err
	}
	establishing, err := newEstablishingController(client, informer, cfg.EstablishDelay, cfg.Logger)
	if err != nil {
		return err
	}
	finalizer, err := newFinalizerController(client, dyn, informer, cfg.Logger)
	if err != nil {
		return err
	}

	go func() {
		var wg sync.WaitGroup
		defer wg.Wait()
		defer func() {
			for _, l := range []*queueLoop{naming.queueLoop, establishing.queueLoop, finalizer.queueLoop} {
				l.queue.ShutDown()
			}
		}()
		wg.Go(func() { informer.RunWithContext(ctx) })
		if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
			return
		}
		// Names are reserved one CRD at a time; establishing is quick;
		// finalizing waits on the server.
		naming.run(ctx, &wg, 1)
		establishing.run(ctx, &wg, 1)
		finalizer.run(ctx, &wg, 5)
		<-ctx.Done()
	}()
	return nil
}
