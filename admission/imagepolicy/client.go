package imagepolicy

import (
	"context"
	"fmt"
	"net/http"
	"time"

	imagepolicyv1alpha1 "k8s.io/api/imagepolicy/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/capstan-io/capstan/authz/webhook"
)

// requestTimeout bounds one call, kube's for its generic webhooks.
const requestTimeout = 30 * time.Second

// newClient builds the Reviewer posting to the kubeconfig's server,
// retrying what kube's webhooks retry with kube's backoff from initial.
func newClient(kubeconfig string, initial time.Duration) (Reviewer, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := imagepolicyv1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	codec := serializer.NewCodecFactory(scheme).LegacyCodec(imagepolicyv1alpha1.SchemeGroupVersion)
	cfg.Timeout = requestTimeout
	cfg.ContentConfig.NegotiatedSerializer = serializer.NegotiatedSerializerWrapper(runtime.SerializerInfo{Serializer: codec})
	client, err := rest.UnversionedRESTClientFor(cfg)
	if err != nil {
		return nil, err
	}
	backoff := wait.Backoff{Duration: initial, Factor: 1.5, Jitter: 0.2, Steps: 5}
	return func(ctx context.Context, review *imagepolicyv1alpha1.ImageReview) (imagepolicyv1alpha1.ImageReviewStatus, error) {
		var result rest.Result
		// The last answer stands once the retries are spent, as in kube.
		_ = wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
			result = client.Post().Body(review).Do(ctx)
			err := result.Error()
			return err == nil || !webhook.ShouldRetry(err), nil
		})
		if err := result.Error(); err != nil {
			return imagepolicyv1alpha1.ImageReviewStatus{}, err
		}
		var code int
		if result.StatusCode(&code); code < http.StatusOK || code >= http.StatusMultipleChoices {
			return imagepolicyv1alpha1.ImageReviewStatus{}, fmt.Errorf("Error contacting webhook: %d", code)
		}
		out := &imagepolicyv1alpha1.ImageReview{}
		if err := result.Into(out); err != nil {
			return imagepolicyv1alpha1.ImageReviewStatus{}, err
		}
		return out.Status, nil
	}, nil
}
