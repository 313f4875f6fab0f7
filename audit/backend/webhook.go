package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// DefaultInitialBackoff is kube's --audit-webhook-initial-backoff.
const DefaultInitialBackoff = 10 * time.Second

// Webhook POSTs each batch of events as an audit.k8s.io/v1 EventList to
// the server of a kubeconfig file, retrying failures with exponential
// backoff.
type Webhook struct {
	nothingToRun
	client  *http.Client
	url     string
	backoff wait.Backoff
	logger  *slog.Logger
}

// NewWebhook reads the kubeconfig at path: its cluster's server (a URL
// whose path is where events go), CA and client credentials.
func NewWebhook(path string, initialBackoff time.Duration, logger *slog.Logger) (*Webhook, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, err
	}
	cfg.Timeout = 30 * time.Second
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	u, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil, err
	}
	return &Webhook{client: client, url: u.String(), logger: logger,
		backoff: wait.Backoff{Duration: initialBackoff, Factor: 1.5, Jitter: 0.2, Steps: 5}}, nil
}

// ProcessEvents sends the events in one EventList; false if every try
// failed.
func (w *Webhook) ProcessEvents(events ...*auditv1.Event) bool {
	list := auditv1.EventList{Items: make([]auditv1.Event, len(events))}
	list.Kind, list.APIVersion = "EventList", auditv1.SchemeGroupVersion.String()
	for i, ev := range events {
		list.Items[i] = *ev
	}
	body, err := json.Marshal(&list)
	if err == nil {
		err = w.sendWithRetries(body)
	}
	if err != nil {
		pluginError(w.logger, "webhook", err, events...)
		return false
	}
	return true
}

func (w *Webhook) sendWithRetries(body []byte) error {
	backoff := w.backoff
	var err error
	for {
		if err = w.send(body); err == nil {
			return nil
		}
		if backoff.Steps <= 1 {
			return err
		}
		time.Sleep(backoff.Step())
	}
}

func (w *Webhook) send(body []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), w.client.Timeout+time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, */*")
	resp, err := w.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("the audit webhook answered %d: %s", resp.StatusCode, bytes.TrimSpace(msg))
	}
	return nil
}

func (w *Webhook) String() string { return "webhook" }
