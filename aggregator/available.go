package aggregator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/transport"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/capstan-io/capstan/apis/apiregistration"
)

// checkTimeout bounds one discovery check of a remote APIService.
const checkTimeout = 5 * time.Second

// condition computes a remote APIService's Available condition with kube's
// reasons and messages: its Service, its port, its endpoints, then a GET
// of its discovery document. It returns the document of a passed check.
func (a *availability) condition(ctx context.Context, svc *apiregv1.APIService) (apiregv1.APIServiceCondition, *metav1.APIResourceList) {
	ref := svc.Spec.Service
	port := int32(443)
	if ref.Port != nil {
		port = *ref.Port
	}
	cond := func(status apiregv1.ConditionStatus, reason, format string, args ...any) apiregv1.APIServiceCondition {
		return apiregv1.APIServiceCondition{Type: apiregv1.Available, Status: status, LastTransitionTime: metav1.Now(),
			Reason: reason, Message: fmt.Sprintf(format, args...)}
	}
	service, err := a.resolver.Services(ctx, ref.Namespace, ref.Name)
	if apierrors.IsNotFound(err) {
		return cond(apiregv1.ConditionFalse, "ServiceNotFound", "service/%s in %q is not present", ref.Name, ref.Namespace), nil
	} else if err != nil {
		return cond(apiregv1.ConditionUnknown, "ServiceAccessError", "service/%s in %q cannot be checked due to: %v", ref.Name, ref.Namespace, err), nil
	}
	if service.Spec.Type == corev1.ServiceTypeClusterIP {
		if c, bad := a.endpointsCondition(ctx, service, port, cond); bad {
			return c, nil
		}
	}
	doc, err := a.discover(ctx, svc, port)
	if err != nil {
		return cond(apiregv1.ConditionFalse, "FailedDiscoveryCheck", "%v", err), nil
	}
	return cond(apiregv1.ConditionTrue, "Passed", "all checks passed"), doc
}

type condFunc func(status apiregv1.ConditionStatus, reason, format string, args ...any) apiregv1.APIServiceCondition

// endpointsCondition checks a ClusterIP Service's port and ready
// endpoints; bad is false when they pass.
func (a *availability) endpointsCondition(ctx context.Context, service *corev1.Service, port int32, cond condFunc) (apiregv1.APIServiceCondition, bool) {
	name, ns := service.Name, service.Namespace
	portName, found := "", false
	for _, p := range service.Spec.Ports {
		if p.Port == port {
			portName, found = p.Name, true
			break
		}
	}
	if !found {
		return cond(apiregv1.ConditionFalse, "ServicePortError", "service/%s in %q is not listening on port %d", name, ns, port), true
	}
	slices, err := a.resolver.Slices(ctx, ns, name)
	switch {
	case err != nil:
		return cond(apiregv1.ConditionUnknown, "EndpointsAccessError", "service/%s in %q cannot be checked due to: %v", name, ns, err), true
	case len(slices) == 0:
		return cond(apiregv1.ConditionFalse, "EndpointsNotFound", "cannot find endpointslices for service/%s in %q", name, ns), true
	case !hasReadyEndpoint(slices, portName):
		return cond(apiregv1.ConditionFalse, "MissingEndpoints", "endpointslices for service/%s in %q have no addresses with port name %q", name, ns, portName), true
	}
	return apiregv1.APIServiceCondition{}, false
}

func hasReadyEndpoint(slices []*discoveryv1.EndpointSlice, portName string) bool {
	for _, s := range slices {
		named := false
		for _, p := range s.Ports {
			named = named || (p.Name != nil && *p.Name == portName)
		}
		if !named {
			continue
		}
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
				return true
			}
		}
	}
	return false
}

// discoveryAttempts is how many discovery checks of one APIService run at
// once: as in kube, one passing is enough, so that a Service with one bad
// endpoint among good ones (each attempt resolves again) stays available.
const discoveryAttempts = 5

// discover runs discoveryAttempts checks of svc's discovery document at once
// and returns the document of the first that passes, or the error of the
// last to fail when none does.
func (a *availability) discover(ctx context.Context, svc *apiregv1.APIService, port int32) (*metav1.APIResourceList, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		doc *metav1.APIResourceList
		err error
	}
	results := make(chan result, discoveryAttempts)
	for range discoveryAttempts {
		go func() {
			doc, err := a.discoverOnce(ctx, svc, port)
			results <- result{doc, err}
		}()
	}
	var err error
	for range discoveryAttempts {
		r := <-results
		if r.err == nil {
			return r.doc, nil
		}
		err = r.err
	}
	return nil, err
}

// discoverOnce GETs the APIService's discovery document from its Service,
// as the aggregator (system:kube-aggregator in system:masters), following
// no redirect.
func (a *availability) discoverOnce(ctx context.Context, svc *apiregv1.APIService, port int32) (*metav1.APIResourceList, error) {
	t := a.routes.get(schema.GroupVersion{Group: svc.Spec.Group, Version: svc.Spec.Version})
	if t == nil {
		return nil, errors.New("no route")
	}
	if t.err != nil {
		return nil, t.err
	}
	loc, err := a.resolver.Resolve(ctx, svc.Spec.Service.Namespace, svc.Spec.Service.Name, port)
	if err != nil {
		return nil, err
	}
	loc.Path = "/apis/" + svc.Spec.Group + "/" + svc.Spec.Version
	if svc.Name == "v1." {
		loc.Path = "/api/" + svc.Spec.Version
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc.String(), nil)
	if err != nil {
		return nil, err
	}
	transport.SetAuthProxyHeaders(req, "system:kube-aggregator", "", []string{"system:masters"}, nil)
	req.Header.Set("Accept", "application/json")
	client := &http.Client{Transport: t.transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		if !errors.Is(err, context.Canceled) { // not a sibling attempt's success
			t.transport.CloseIdleConnections()
		}
		return nil, fmt.Errorf("failing or missing response from %v: %w", loc, err)
	}
	defer res.Body.Close()
	if res.StatusCode < http.StatusOK || res.StatusCode >= http.StatusMultipleChoices {
		return nil, fmt.Errorf("failing or missing response from %v: bad status from %v: %d", loc, loc, res.StatusCode)
	}
	var doc metav1.APIResourceList
	body, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil || json.Unmarshal(body, &doc) != nil {
		// Kube's check passes on any 2xx; a document it cannot read only
		// leaves the group out of discovery.
		return nil, nil
	}
	return &doc, nil
}

// sameCondition reports whether the conditions say the same, their
// transition times aside.
func sameCondition(svc *apiregv1.APIService, c apiregv1.APIServiceCondition) bool {
	old := apiregistration.Condition(svc, c.Type)
	if old == nil {
		return false
	}
	o := *old
	o.LastTransitionTime = c.LastTransitionTime
	return apiequality.Semantic.DeepEqual(o, c)
}
