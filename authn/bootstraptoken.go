package authn

import (
	"context"
	"crypto/subtle"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstrapsecret "k8s.io/cluster-bootstrap/util/secrets"
	bootstraptokens "k8s.io/cluster-bootstrap/util/tokens"
)

// SecretGetter reads a secret of kube-system; it returns the API's
// NotFound error for a missing one.
type SecretGetter func(ctx context.Context, name string) (*corev1.Secret, error)

// NewBootstrapToken returns the authenticator of bootstrap tokens
// (--enable-bootstrap-token-auth): a token "<id>.<secret>" is valid while
// the secret bootstrap-token-<id> of kube-system, of type
// bootstrap.kubernetes.io/token, holds that id and secret (compared in
// constant time), has not expired and allows usage-bootstrap-authentication.
// The user is system:bootstrap:<id> in system:bootstrappers and the
// secret's auth-extra-groups.
//
// As in kube, a token that does not match gets no opinion rather than an
// error (the reason is only logged), so nothing tells a prober which part
// was wrong; the request still gets 401, since a presented token never
// falls back to anonymous.
func NewBootstrapToken(get SecretGetter, logger *slog.Logger, now func() time.Time) TokenAuthenticator {
	if now == nil {
		now = time.Now
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return TokenAuthenticatorFunc(func(ctx context.Context, token string) (*Response, bool, error) {
		id, secretValue, err := bootstraptokens.ParseToken(token)
		if err != nil {
			return nil, false, nil
		}
		name := bootstrapapi.BootstrapTokenSecretPrefix + id
		secret, err := get(ctx, name)
		if apierrors.IsNotFound(err) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		reject := func(why string) (*Response, bool, error) {
			logger.Debug("bootstrap token secret rejects the token", "secret", name, "reason", why)
			return nil, false, nil
		}
		switch {
		case secret.DeletionTimestamp != nil:
			return reject("is deleted and awaiting removal")
		case secret.Type != corev1.SecretType(bootstrapapi.SecretTypeBootstrapToken) || secret.Data == nil:
			return reject("has invalid type, expected " + string(bootstrapapi.SecretTypeBootstrapToken))
		case subtle.ConstantTimeCompare([]byte(bootstrapsecret.GetData(secret, bootstrapapi.BootstrapTokenSecretKey)), []byte(secretValue)) != 1:
			return reject("has invalid value for key " + bootstrapapi.BootstrapTokenSecretKey)
		case bootstrapsecret.GetData(secret, bootstrapapi.BootstrapTokenIDKey) != id:
			return reject("has invalid value for key " + bootstrapapi.BootstrapTokenIDKey)
		case bootstrapsecret.HasExpired(secret, now()):
			return reject("has expired")
		case bootstrapsecret.GetData(secret, bootstrapapi.BootstrapTokenUsageAuthentication) != "true":
			return reject("not marked " + bootstrapapi.BootstrapTokenUsageAuthentication + "=true")
		}
		groups, err := bootstrapsecret.GetGroups(secret)
		if err != nil {
			return reject("has invalid value for key " + bootstrapapi.BootstrapTokenExtraGroupsKey + ": " + err.Error())
		}
		return &Response{User: &User{Name: bootstrapapi.BootstrapUserPrefix + id, Groups: groups}}, true, nil
	})
}
