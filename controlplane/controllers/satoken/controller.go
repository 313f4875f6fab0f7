// Package satoken is kube-controller-manager's serviceaccount-token
// controller, in-process: a Secret of type
// kubernetes.io/service-account-token that names a service account gets a
// legacy (secret-based) token of that account, the cluster's CA and its
// namespace; one whose account is gone, or was recreated, is deleted, and
// so are an account's token secrets when the account is deleted.
package satoken

import (
	"bytes"
	"context"
	"errors"
	"log/slog"

	"github.com/go-jose/go-jose/v4/jwt"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/internal/workloop"
)

// Name is kube-controller-manager's name of the controller.
const Name = "serviceaccount-token-controller"

// Signer signs a token's claims; its issuer is kube's legacy one,
// kubernetes/serviceaccount.
type Signer interface {
	Sign(public *jwt.Claims, private any) (string, error)
}

// Config holds what the controller needs.
type Config struct {
	Client kubernetes.Interface
	Signer Signer
	// RootCA is the ca.crt the secrets get (none when empty).
	RootCA []byte
	Logger *slog.Logger
}

// accountIndex indexes token secrets by namespace/account name.
const accountIndex = "account"

// Controller fills and removes token secrets.
type Controller struct {
	cfg      Config
	accounts cache.SharedIndexInformer
	secrets  cache.SharedIndexInformer
	queue    workqueue.TypedRateLimitingInterface[string]
}

// New returns the controller; Run starts it.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Signer == nil || cfg.Logger == nil {
		return nil, errors.New("serviceaccount-token: Client, Signer and Logger are required")
	}
	cfg.Logger = cfg.Logger.With("controller", Name)
	onlyTokens := func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("type", string(corev1.SecretTypeServiceAccountToken)).String()
	}
	c := &Controller{
		cfg:      cfg,
		accounts: coreinformers.NewServiceAccountInformer(cfg.Client, "", 0, cache.Indexers{}),
		secrets: coreinformers.NewFilteredSecretInformer(cfg.Client, "", 0, cache.Indexers{accountIndex: func(obj any) ([]string, error) {
			s := obj.(*corev1.Secret)
			return []string{s.Namespace + "/" + s.Annotations[corev1.ServiceAccountNameKey]}, nil
		}}, onlyTokens),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: Name}),
	}
	if _, err := c.secrets.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
	}); err != nil {
		return nil, err
	}
	// An account that goes, or comes back, changes what its secrets
	// should be.
	_, err := c.accounts.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.accountChanged,
		UpdateFunc: func(_, obj any) { c.accountChanged(obj) },
		DeleteFunc: c.accountChanged,
	})
	return c, err
}

func (c *Controller) enqueue(obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		c.queue.Add(key)
	}
}

func (c *Controller) accountChanged(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	sa, ok := obj.(*corev1.ServiceAccount)
	if !ok {
		return
	}
	secrets, _ := c.secrets.GetIndexer().ByIndex(accountIndex, sa.Namespace+"/"+sa.Name)
	for _, s := range secrets {
		c.enqueue(s)
	}
}

// Run syncs token secrets with workers goroutines until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.cfg.Logger.Info("starting")
	defer c.cfg.Logger.Info("stopped")
	workloop.Run(ctx, c.queue, workers, workloop.Worker(c.queue, c.sync, func(key string, err error) {
		c.cfg.Logger.Debug("sync failed", "secret", key, "err", err)
	}), c.accounts, c.secrets)
}

func (c *Controller) sync(ctx context.Context, key string) error {
	obj, ok, err := c.secrets.GetStore().GetByKey(key)
	if err != nil || !ok {
		return err
	}
	secret := obj.(*corev1.Secret)
	if secret.DeletionTimestamp != nil {
		return nil
	}
	sa, err := c.account(ctx, secret)
	if err != nil {
		return err
	}
	if sa == nil {
		err := c.cfg.Client.CoreV1().Secrets(secret.Namespace).Delete(ctx, secret.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &secret.UID}})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return err
	}
	return c.fill(ctx, sa, secret)
}

// account is the secret's service account, nil when there is none with
// the secret's name and (when it records one) UID: from the cache, then,
// as the cache may not have seen a new account yet, from the API.
func (c *Controller) account(ctx context.Context, secret *corev1.Secret) (*corev1.ServiceAccount, error) {
	name, uid := secret.Annotations[corev1.ServiceAccountNameKey], types.UID(secret.Annotations[corev1.ServiceAccountUIDKey])
	matches := func(sa *corev1.ServiceAccount) bool { return uid == "" || uid == sa.UID }
	if obj, ok, err := c.accounts.GetStore().GetByKey(secret.Namespace + "/" + name); err == nil && ok && matches(obj.(*corev1.ServiceAccount)) {
		return obj.(*corev1.ServiceAccount), nil
	}
	sa, err := c.cfg.Client.CoreV1().ServiceAccounts(secret.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !matches(sa) {
		return nil, nil
	}
	return sa, nil
}

// fill gives the secret what it lacks of token, ca.crt and namespace, and
// the account's name and UID, on the live secret when the cache has it as
// it is (a stale cached secret is synced again when the cache catches up).
func (c *Controller) fill(ctx context.Context, sa *corev1.ServiceAccount, cached *corev1.Secret) error {
	if !c.needsUpdate(cached) {
		return nil
	}
	secrets := c.cfg.Client.CoreV1().Secrets(cached.Namespace)
	live, err := secrets.Get(ctx, cached.Name, metav1.GetOptions{})
	if err != nil || live.ResourceVersion != cached.ResourceVersion || !c.needsUpdate(live) {
		return client404(err)
	}
	if live.Annotations == nil {
		live.Annotations = map[string]string{}
	}
	if live.Data == nil {
		live.Data = map[string][]byte{}
	}
	if len(c.cfg.RootCA) > 0 {
		live.Data[corev1.ServiceAccountRootCAKey] = c.cfg.RootCA
	}
	live.Data[corev1.ServiceAccountNamespaceKey] = []byte(live.Namespace)
	if len(live.Data[corev1.ServiceAccountTokenKey]) == 0 {
		token, err := c.cfg.Signer.Sign(&jwt.Claims{Subject: "system:serviceaccount:" + sa.Namespace + ":" + sa.Name},
			&authn.LegacyClaims{ServiceAccountName: sa.Name, ServiceAccountUID: string(sa.UID), SecretName: live.Name, Namespace: sa.Namespace})
		if err != nil {
			return err
		}
		live.Data[corev1.ServiceAccountTokenKey] = []byte(token)
	}
	live.Annotations[corev1.ServiceAccountNameKey] = sa.Name
	live.Annotations[corev1.ServiceAccountUIDKey] = string(sa.UID)
	_, err = secrets.Update(ctx, live, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		return nil
	}
	return client404(err)
}

func (c *Controller) needsUpdate(s *corev1.Secret) bool {
	needsCA := len(c.cfg.RootCA) > 0 && !bytes.Equal(s.Data[corev1.ServiceAccountRootCAKey], c.cfg.RootCA)
	needsNamespace := string(s.Data[corev1.ServiceAccountNamespaceKey]) != s.Namespace
	return needsCA || needsNamespace || len(s.Data[corev1.ServiceAccountTokenKey]) == 0
}

// client404 is err, nil when the secret is gone.
func client404(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
