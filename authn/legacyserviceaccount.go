package authn

import (
	"context"
	"crypto"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/capstan-io/capstan/metrics"
	corev1 "k8s.io/api/core/v1"
)

// Secret-based ("legacy") service account tokens, as Kubernetes defines
// them.
const (
	// LegacyIssuer is the iss of secret-based tokens.
	LegacyIssuer = "kubernetes/serviceaccount"
	// LegacyTokenLastUsedLabel records the day (UTC, 2006-01-02) a
	// secret's token was last used.
	LegacyTokenLastUsedLabel = "kubernetes.io/legacy-token-last-used"
	// LegacyTokenInvalidSinceLabel marks a secret whose token must no
	// longer authenticate.
	LegacyTokenInvalidSinceLabel = "kubernetes.io/legacy-token-invalid-since"
)

// LegacyClaims are the private claims of a secret-based token.
type LegacyClaims struct {
	ServiceAccountName string `json:"kubernetes.io/serviceaccount/service-account.name"`
	ServiceAccountUID  string `json:"kubernetes.io/serviceaccount/service-account.uid"`
	SecretName         string `json:"kubernetes.io/serviceaccount/secret.name"`
	Namespace          string `json:"kubernetes.io/serviceaccount/namespace"`
}

// LegacyServiceAccountTokenOptions configure NewLegacyServiceAccountToken.
type LegacyServiceAccountTokenOptions struct {
	// Keys verify signatures (those of the bound tokens).
	Keys              []crypto.PublicKey
	ImplicitAudiences []string
	Getter            ServiceAccountGetter
	// MarkUsed labels a secret with LegacyTokenLastUsedLabel=today; nil
	// skips it. Its failures are only logged.
	MarkUsed func(ctx context.Context, secret *corev1.Secret, today string) error
	Logger   *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// NewLegacyServiceAccountToken returns the authenticator of secret-based
// service account tokens: JWTs of issuer kubernetes/serviceaccount signed by
// one of the keys, valid while the secret they name exists, is not being
// deleted, holds the very token in its "token" key, is not labelled
// invalid, and while the service account exists with the UID of the claims.
// A use labels the secret with the day, at most once a day, as kube does.
func NewLegacyServiceAccountToken(o LegacyServiceAccountTokenOptions) (TokenAuthenticator, error) {
	v, err := newJWTVerifier([]string{LegacyIssuer}, o.Keys, o.ImplicitAudiences)
	if err != nil {
		return nil, err
	}
	if o.Getter == nil {
		return nil, errors.New("legacy service account tokens need a getter")
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	markUsed := func(ctx context.Context, secret *corev1.Secret) {
		if o.MarkUsed == nil {
			return
		}
		t := now().UTC()
		today, tomorrow := t.Format(time.DateOnly), t.AddDate(0, 0, 1).Format(time.DateOnly)
		// Servers whose clocks straddle midnight must not relabel in turn.
		if last := secret.Labels[LegacyTokenLastUsedLabel]; last == today || last == tomorrow {
			return
		}
		if err := o.MarkUsed(ctx, secret, today); err != nil {
			logger.Warn("labelling a legacy service account token's last use", "namespace", secret.Namespace, "secret", secret.Name, "err", err)
		}
	}
	return TokenAuthenticatorFunc(func(ctx context.Context, token string) (*Response, bool, error) {
		private := &LegacyClaims{}
		public, auds, ok, err := v.verify(ctx, token, private)
		if !ok || err != nil {
			return nil, false, err
		}
		switch {
		case public.Subject == "":
			return nil, false, errors.New("sub claim is missing")
		case private.Namespace == "":
			return nil, false, errors.New("namespace claim is missing")
		case private.SecretName == "":
			return nil, false, errors.New("secretName claim is missing")
		case private.ServiceAccountName == "":
			return nil, false, errors.New("serviceAccountName claim is missing")
		case private.ServiceAccountUID == "":
			return nil, false, errors.New("serviceAccountUID claim is missing")
		case public.Subject != ServiceAccountUsername(private.Namespace, private.ServiceAccountName) ||
			strings.Count(strings.TrimPrefix(public.Subject, ServiceAccountUsernamePrefix), ":") != 1:
			return nil, false, errors.New("sub claim is invalid")
		}
		ns, name := private.Namespace, private.ServiceAccountName
		secret, err := o.Getter.GetSecret(ctx, ns, private.SecretName)
		if err != nil || secret.DeletionTimestamp != nil {
			return nil, false, errors.New("Token has been invalidated")
		}
		if subtle.ConstantTimeCompare(secret.Data[corev1.ServiceAccountTokenKey], []byte(token)) == 0 {
			return nil, false, errors.New("Token does not match server's copy")
		}
		sa, err := o.Getter.GetServiceAccount(ctx, ns, name)
		if err != nil {
			return nil, false, err
		}
		if sa.DeletionTimestamp != nil {
			return nil, false, fmt.Errorf("ServiceAccount %s/%s has been deleted", ns, name)
		}
		if string(sa.UID) != private.ServiceAccountUID {
			return nil, false, fmt.Errorf("ServiceAccount UID (%s) does not match claim (%s)", sa.UID, private.ServiceAccountUID)
		}
		invalid := secret.Labels[LegacyTokenInvalidSinceLabel] != ""
		metrics.ServiceAccountSecretToken(slices.ContainsFunc(sa.Secrets, func(r corev1.ObjectReference) bool { return r.Name == secret.Name }), invalid)
		if invalid {
			markUsed(ctx, secret)
			return nil, false, fmt.Errorf("the token in secret %s/%s for service account %s/%s has been marked invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the '%s' label from the secret to temporarily allow use of this token",
				ns, private.SecretName, ns, name, LegacyTokenInvalidSinceLabel)
		}
		markUsed(ctx, secret)
		return &Response{User: &User{Name: ServiceAccountUsername(ns, name), UID: private.ServiceAccountUID, Groups: ServiceAccountGroups(ns)}, Audiences: auds}, true, nil
	}), nil
}
