package controllers

import (
	"context"
	"log/slog"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/transport"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// establishingController makes a CRD Established once its names are
// accepted, after delay: with several servers, the delay gives each of them
// time to see the accepted names and serve the resource first.
type establishingController struct {
	*queueLoop
	client  *crdClient
	indexer cache.Indexer
	delay   time.Duration
	now     func() time.Time
}

func newEstablishingController(client *crdClient, informer cache.SharedIndexInformer, delay time.Duration, logger *slog.Logger) (*establishingController, error) {
	c := &establishingController{
		queueLoop: newQueueLoop("crdEstablishing", logger),
		client:    client,
		indexer:   informer.GetIndexer(),
		delay:     delay,
		now:       time.Now,
	}
	c.handle = c.sync
	_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
	})
	return c, err
}

// enqueue queues a CRD whose names are accepted and which is not
// established yet.
func (c *establishingController) enqueue(obj any) {
	crd, ok := crdFrom(obj)
	if !ok || !needsEstablishing(crd) {
		return
	}
	c.queue.AddAfter(crd.Name, c.delay)
}

func needsEstablishing(crd *apiextv1.CustomResourceDefinition) bool {
	return conditionTrue(crd, apiextv1.NamesAccepted) && !conditionTrue(crd, apiextv1.Established)
}

func (c *establishingController) sync(ctx context.Context, name string) (time.Duration, error) {
	crd, ok := getCRD(c.indexer, name)
	if !ok || !needsEstablishing(crd) {
		return 0, nil
	}
	cond := establishedCondition(crd)
	if sameCondition(&cond, findCondition(crd, apiextv1.Established)) {
		// Written already (by naming, along with the names).
		return 0, nil
	}
	update := statusCopy(crd)
	setCondition(update, cond, metav1.NewTime(c.now()))
	_, err := updateStatus(ctx, c.client, update)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		// The informer will bring the newer state, and the CRD back here.
		return 0, nil
	}
	return 0, err
}

// establishedCondition is the Established condition of a CRD whose names
// are accepted: True, unless its conversion webhook's CA bundle holds no
// usable certificate.
func establishedCondition(crd *apiextv1.CustomResourceDefinition) apiextv1.CustomResourceDefinitionCondition {
	if !validCABundle(crd) {
		return apiextv1.CustomResourceDefinitionCondition{
			Type: apiextv1.Established, Status: apiextv1.ConditionFalse,
			Reason: "InvalidCABundle", Message: "The conversion webhook CABundle is invalid",
		}
	}
	return apiextv1.CustomResourceDefinitionCondition{
		Type: apiextv1.Established, Status: apiextv1.ConditionTrue,
		Reason: "InitialNamesAccepted", Message: "the initial names have been accepted",
	}
}

// validCABundle reports whether the CRD's conversion webhook CA bundle, if
// any, makes a TLS configuration; an empty bundle is valid (the system roots
// are used).
func validCABundle(crd *apiextv1.CustomResourceDefinition) bool {
	conv := crd.Spec.Conversion
	if conv == nil || conv.Webhook == nil || conv.Webhook.ClientConfig == nil {
		return true
	}
	_, err := transport.TLSConfigFor(&transport.Config{TLS: transport.TLSConfig{CAData: conv.Webhook.ClientConfig.CABundle}})
	return err == nil
}
