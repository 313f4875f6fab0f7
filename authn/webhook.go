package authn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// DefaultWebhookVersion is --authentication-token-webhook-version's
// default in kube-apiserver.
const DefaultWebhookVersion = "v1beta1"

// webhookTimeout bounds one call of a webhook, as kube's webhooks are
// bounded (a kubeconfig cannot set a timeout).
const webhookTimeout = 30 * time.Second

// ValidateWebhookVersion accepts the TokenReview versions kube sends.
func ValidateWebhookVersion(v string) error {
	if v != "v1" && v != "v1beta1" {
		return fmt.Errorf("unsupported authentication webhook version %q, supported versions are %q, %q", v, "v1", "v1beta1")
	}
	return nil
}

// WebhookRetryBackoff is kube's backoff between calls of an authentication
// webhook that failed in a way worth retrying.
func WebhookRetryBackoff() wait.Backoff {
	return wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
}

// WebhookOptions configure NewWebhookToken.
type WebhookOptions struct {
	// KubeconfigFile names the webhook: its cluster's server is the URL
	// TokenReviews are POSTed to, its user the credentials sent.
	KubeconfigFile string
	// Version is the TokenReview version, v1 or v1beta1.
	Version string
	// ImplicitAudiences are the server's audiences, assumed of a review
	// whose status names none.
	ImplicitAudiences []string
	// Backoff is WebhookRetryBackoff() when zero.
	Backoff wait.Backoff
}

// NewWebhookToken returns the authenticator that asks a remote service
// about a token with a TokenReview holding the token and the audiences the
// request asks for. Transport failures, 5xx, 429 and answers with
// Retry-After are retried with backoff; what still fails is an error (the
// request gets 401). A review that does not authenticate the token gets no
// opinion, or its status.error as an error.
func NewWebhookToken(o WebhookOptions) (TokenAuthenticator, error) {
	if err := ValidateWebhookVersion(o.Version); err != nil {
		return nil, err
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.KubeconfigFile
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, err
	}
	cfg.Timeout = webhookTimeout
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	backoff := o.Backoff
	if backoff.Steps == 0 {
		backoff = WebhookRetryBackoff()
	}
	return &webhookToken{client: client, url: cfg.Host, apiVersion: authenticationv1.GroupName + "/" + o.Version,
		implicit: o.ImplicitAudiences, backoff: backoff}, nil
}

type webhookToken struct {
	client     *http.Client
	url        string
	apiVersion string
	implicit   []string
	backoff    wait.Backoff
}

func (w *webhookToken) AuthenticateToken(ctx context.Context, token string) (*Response, bool, error) {
	wantAuds, checkAuds := AudiencesFrom(ctx)
	review := authenticationv1.TokenReview{
		TypeMeta: metav1.TypeMeta{APIVersion: w.apiVersion, Kind: "TokenReview"},
		Spec:     authenticationv1.TokenReviewSpec{Token: token, Audiences: wantAuds},
	}
	body, err := json.Marshal(review)
	if err != nil {
		return nil, false, err
	}
	var result *authenticationv1.TokenReview
	var callErr error
	err = wait.ExponentialBackoffWithContext(ctx, w.backoff, func(ctx context.Context) (bool, error) {
		var retry bool
		result, retry, callErr = w.call(ctx, body)
		switch {
		case retry:
			return false, nil
		case callErr != nil:
			return false, callErr
		}
		return true, nil
	})
	switch {
	case callErr != nil:
		return nil, false, fmt.Errorf("token webhook: %w", callErr)
	case err != nil:
		return nil, false, fmt.Errorf("token webhook call failed: %w", err)
	}
	var auds []string
	if checkAuds {
		got := w.implicit
		if len(result.Status.Audiences) > 0 {
			got = result.Status.Audiences
		}
		if auds = IntersectAudiences(wantAuds, got); len(auds) == 0 {
			return nil, false, nil
		}
	}
	if !result.Status.Authenticated {
		if result.Status.Error != "" {
			return nil, false, errors.New(result.Status.Error)
		}
		return nil, false, nil
	}
	u := result.Status.User
	var extra map[string][]string
	if u.Extra != nil {
		extra = make(map[string][]string, len(u.Extra))
		for k, v := range u.Extra {
			extra[k] = v
		}
	}
	return &Response{User: &User{Name: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra}, Audiences: auds}, true, nil
}

// call POSTs one review; retry tells whether a failure is worth another
// try, as kube judges it.
func (w *webhookToken) call(ctx context.Context, body []byte) (_ *authenticationv1.TokenReview, retry bool, _ error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return nil, false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF), err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 10<<20))
	if err != nil {
		return nil, true, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		retry := resp.StatusCode == http.StatusInternalServerError || resp.StatusCode == http.StatusGatewayTimeout ||
			resp.StatusCode == http.StatusTooManyRequests
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			retry = true
		}
		return nil, retry, fmt.Errorf("the server responded with %d: %s", resp.StatusCode, bytes.TrimSpace(data))
	}
	var out authenticationv1.TokenReview
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, false, fmt.Errorf("decoding the TokenReview: %w", err)
	}
	if out.Kind != "TokenReview" {
		return nil, false, fmt.Errorf("the webhook answered with kind %q, not TokenReview", out.Kind)
	}
	return &out, false, nil
}
