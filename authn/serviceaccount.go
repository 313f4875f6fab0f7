package authn

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/capstan-io/capstan/metrics"
	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
)

// Service account user and group names, and the Extra keys of tokens bound
// to a pod, as Kubernetes defines them.
const (
	ServiceAccountUsernamePrefix = "system:serviceaccount:"
	AllServiceAccountsGroup      = "system:serviceaccounts"
	ServiceAccountGroupPrefix    = "system:serviceaccounts:"

	PodNameKey  = "authentication.kubernetes.io/pod-name"
	PodUIDKey   = "authentication.kubernetes.io/pod-uid"
	NodeNameKey = "authentication.kubernetes.io/node-name"
	NodeUIDKey  = "authentication.kubernetes.io/node-uid"
)

// ServiceAccountUsername is the user name of a service account.
func ServiceAccountUsername(namespace, name string) string {
	return ServiceAccountUsernamePrefix + namespace + ":" + name
}

// SplitServiceAccountUsername returns the namespace and name of a service
// account's user name, as kube splits it: both must be valid names.
func SplitServiceAccountUsername(username string) (namespace, name string, ok bool) {
	rest, ok := strings.CutPrefix(username, ServiceAccountUsernamePrefix)
	if !ok {
		return "", "", false
	}
	parts := strings.Split(rest, ":")
	if len(parts) != 2 || len(apivalidation.ValidateNamespaceName(parts[0], false)) != 0 ||
		len(apivalidation.ValidateServiceAccountName(parts[1], false)) != 0 {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// ServiceAccountGroups are the groups of a service account's user, besides
// system:authenticated.
func ServiceAccountGroups(namespace string) []string {
	return []string{AllServiceAccountsGroup, ServiceAccountGroupPrefix + namespace}
}

// tokenLeeway is the clock skew tolerated on exp, nbf and iat, and how long
// a bound object may be marked deleted before its tokens stop working.
const tokenLeeway = jwt.DefaultLeeway

// tokenAlgorithms are the signature algorithms a service account token may
// use.
var tokenAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.ES256, jose.ES384, jose.ES512}

// ServiceAccountClaims are the private claims of a service account token,
// under "kubernetes.io".
type ServiceAccountClaims struct {
	Kubernetes KubernetesClaims `json:"kubernetes.io,omitempty"`
}

// KubernetesClaims name the service account and the object the token is
// bound to.
type KubernetesClaims struct {
	Namespace      string     `json:"namespace,omitempty"`
	ServiceAccount ObjectRef  `json:"serviceaccount,omitempty"`
	Pod            *ObjectRef `json:"pod,omitempty"`
	Secret         *ObjectRef `json:"secret,omitempty"`
	Node           *ObjectRef `json:"node,omitempty"`
	// WarnAfter is when a token whose validity was extended (see
	// --service-account-extend-token-expiration) would have expired: past
	// it, its use is recorded as stale.
	WarnAfter *jwt.NumericDate `json:"warnafter,omitempty"`
}

// ObjectRef is an object of a token's claims.
type ObjectRef struct {
	Name string `json:"name,omitempty"`
	UID  string `json:"uid,omitempty"`
}

// TokenBinding is what a new token is bound to besides its service
// account: a pod (and the node it runs on, which may lack a UID) or a
// secret, or nothing.
type TokenBinding struct {
	Pod    *corev1.Pod
	Node   *corev1.Node
	Secret *corev1.Secret
}

// ServiceAccountClaimsFor builds the registered and private claims of a
// token for sa, valid from now for expiration, for audiences.
func ServiceAccountClaimsFor(sa *corev1.ServiceAccount, b TokenBinding, now time.Time, expiration time.Duration, audiences []string) (*jwt.Claims, *ServiceAccountClaims) {
	public := &jwt.Claims{
		Subject:   ServiceAccountUsername(sa.Namespace, sa.Name),
		Audience:  jwt.Audience(audiences),
		IssuedAt:  jwt.NewNumericDate(now),
		NotBefore: jwt.NewNumericDate(now),
		Expiry:    jwt.NewNumericDate(now.Add(expiration)),
		ID:        string(uuid.NewUUID()),
	}
	private := &ServiceAccountClaims{Kubernetes: KubernetesClaims{
		Namespace:      sa.Namespace,
		ServiceAccount: ObjectRef{Name: sa.Name, UID: string(sa.UID)},
	}}
	switch {
	case b.Pod != nil:
		private.Kubernetes.Pod = &ObjectRef{Name: b.Pod.Name, UID: string(b.Pod.UID)}
		if b.Node != nil {
			private.Kubernetes.Node = &ObjectRef{Name: b.Node.Name, UID: string(b.Node.UID)}
		}
	case b.Secret != nil:
		private.Kubernetes.Secret = &ObjectRef{Name: b.Secret.Name, UID: string(b.Secret.UID)}
	}
	return public, private
}

// TokenSigner signs service account tokens with one private key for one
// issuer.
type TokenSigner struct {
	issuer string
	signer jose.Signer
}

// NewTokenSigner returns a signer of tokens of issuer with key, an RSA or
// ECDSA private key; the tokens' key ID is that of the public key (see
// KeyID).
func NewTokenSigner(issuer string, key crypto.Signer) (*TokenSigner, error) {
	alg, err := algorithmOf(key.Public())
	if err != nil {
		return nil, err
	}
	kid, err := KeyID(key.Public())
	if err != nil {
		return nil, err
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: key, KeyID: kid, Algorithm: string(alg)}}, nil)
	if err != nil {
		return nil, fmt.Errorf("token signer: %w", err)
	}
	return &TokenSigner{issuer: issuer, signer: signer}, nil
}

// Issuer is the iss of the tokens s signs.
func (s *TokenSigner) Issuer() string { return s.issuer }

// Sign returns the compact serialization of a token with the claims.
func (s *TokenSigner) Sign(public *jwt.Claims, private any) (string, error) {
	c := *public
	c.Issuer = s.issuer
	// aud is always a list, as Kubernetes writes it (go-jose would write a
	// single audience as a string).
	auds := []string(c.Audience)
	c.Audience = nil
	b := jwt.Signed(s.signer).Claims(&c).Claims(private)
	if len(auds) > 0 {
		b = b.Claims(map[string]any{"aud": auds})
	}
	return b.Serialize()
}

// KeyID is the key ID of a public key: the unpadded base64url SHA-256 of
// its PKIX DER encoding, as Kubernetes names its service account keys.
func KeyID(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("key ID: %w", err)
	}
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// algorithmOf is the signature algorithm of a public key.
func algorithmOf(pub crypto.PublicKey) (jose.SignatureAlgorithm, error) {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return jose.RS256, nil
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return jose.ES256, nil
		case elliptic.P384():
			return jose.ES384, nil
		case elliptic.P521():
			return jose.ES512, nil
		}
		return "", errors.New("unknown private key curve, must be 256, 384, or 521")
	}
	return "", fmt.Errorf("unsupported key type %T, must be RSA or ECDSA", pub)
}

// JSONWebKeySet is the public key set of keys, as /openid/v1/jwks serves
// it: each key with its use, algorithm and key ID.
func JSONWebKeySet(keys []crypto.PublicKey) (*jose.JSONWebKeySet, error) {
	set := &jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}
	for _, k := range keys {
		alg, err := algorithmOf(k)
		if err != nil {
			return nil, err
		}
		kid, err := KeyID(k)
		if err != nil {
			return nil, err
		}
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: k, KeyID: kid, Algorithm: string(alg), Use: "sig"})
	}
	return set, nil
}

// ServiceAccountGetter reads the objects a service account token names.
// Getters return the API's NotFound errors for missing objects.
type ServiceAccountGetter interface {
	GetServiceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error)
	GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error)
	GetSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
}

// ServiceAccountTokenOptions configure NewServiceAccountToken.
type ServiceAccountTokenOptions struct {
	// Issuers are the accepted iss values; tokens of other issuers get no
	// opinion.
	Issuers []string
	// Keys verify signatures.
	Keys []crypto.PublicKey
	// ImplicitAudiences are the server's audiences: a token must be valid
	// for one of the audiences the request asks for, or of these when it
	// asks for none.
	ImplicitAudiences []string
	Getter            ServiceAccountGetter
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// NewServiceAccountToken returns the authenticator of service account
// tokens (JWTs signed by one of the keys): it checks the signature, the
// issuer, the audiences, expiry, and that the service account and the
// object the token is bound to still exist with the UIDs of the claims.
// The user is system:serviceaccount:<namespace>:<name> in
// system:serviceaccounts and system:serviceaccounts:<namespace>, with the
// token's ID as credential ID and the bound pod's name and UID in Extra.
func NewServiceAccountToken(o ServiceAccountTokenOptions) (TokenAuthenticator, error) {
	v, err := newJWTVerifier(o.Issuers, o.Keys, o.ImplicitAudiences)
	if err != nil {
		return nil, err
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return TokenAuthenticatorFunc(func(ctx context.Context, token string) (*Response, bool, error) {
		private := &ServiceAccountClaims{}
		public, auds, ok, err := v.verify(ctx, token, private)
		if !ok || err != nil {
			return nil, false, err
		}
		t := now()
		u, err := validateServiceAccountClaims(ctx, o.Getter, t, public, private)
		if err != nil {
			return nil, false, err
		}
		resp := &Response{User: u, Audiences: auds}
		if w := private.Kubernetes.WarnAfter; w != nil && *w != 0 {
			stale := t.After(w.Time())
			metrics.ServiceAccountBoundToken(stale)
			if stale {
				resp.AuditAnnotations = map[string]string{"authentication.k8s.io/stale-token": fmt.Sprintf(
					"subject: %s, seconds after warning threshold: %d", public.Subject, t.Unix()-w.Time().Unix())}
			}
		}
		return resp, true, nil
	}), nil
}

// jwtVerifier checks the signature, issuer and audiences of service
// account tokens.
type jwtVerifier struct {
	issuers  []string
	keys     []verifyingKey
	implicit []string
}

type verifyingKey struct {
	id  string
	key crypto.PublicKey
}

func newJWTVerifier(issuers []string, keys []crypto.PublicKey, implicitAudiences []string) (*jwtVerifier, error) {
	if len(keys) == 0 {
		return nil, errors.New("service account tokens need at least one public key")
	}
	v := &jwtVerifier{issuers: slices.Clone(issuers), implicit: slices.Clone(implicitAudiences)}
	for _, k := range keys {
		id, err := KeyID(k)
		if err != nil {
			return nil, err
		}
		v.keys = append(v.keys, verifyingKey{id, k})
	}
	return v, nil
}

// verify checks token and decodes its claims into the registered ones it
// returns and private; it returns the audiences in common with those the
// context asks for. ok is false, with no error, for a token that is not a
// JWT of one of the issuers.
func (v *jwtVerifier) verify(ctx context.Context, token string, private any) (_ *jwt.Claims, auds []string, ok bool, _ error) {
	if !slices.Contains(v.issuers, UnverifiedIssuer(token)) {
		return nil, nil, false, nil
	}
	tok, err := jwt.ParseSigned(token, tokenAlgorithms)
	if err != nil {
		return nil, nil, false, nil
	}
	var kid string
	for _, h := range tok.Headers {
		if h.KeyID != "" {
			kid = h.KeyID
			break
		}
	}
	public := &jwt.Claims{}
	var errs []error
	verified, tried := false, 0
	for _, k := range v.keys {
		if kid != "" && k.id != kid {
			continue
		}
		tried++
		if err := tok.Claims(k.key, public, private); err != nil {
			errs = append(errs, err)
			continue
		}
		verified = true
		break
	}
	switch {
	case tried == 0:
		return nil, nil, false, errors.New("invalid signature, no keys found")
	case !verified:
		return nil, nil, false, errors.Join(errs...)
	}
	if !slices.Contains(v.issuers, public.Issuer) {
		return nil, nil, false, fmt.Errorf("token issuer %q is invalid", public.Issuer)
	}
	tokenAuds := []string(public.Audience)
	if len(tokenAuds) == 0 {
		metrics.ServiceAccountLegacyToken()
		tokenAuds = v.implicit
	}
	requested, set := AudiencesFrom(ctx)
	if !set {
		requested = v.implicit
	}
	auds = IntersectAudiences(tokenAuds, requested)
	if len(auds) == 0 && len(v.implicit) != 0 {
		return nil, nil, false, fmt.Errorf("token audiences %q is invalid for the target audiences %q", tokenAuds, requested)
	}
	return public, auds, true, nil
}

// UnverifiedIssuer reads the iss of a compact JWS without verifying it, to
// leave tokens of other issuers to other authenticators ("" when token is
// not one).
func UnverifiedIssuer(token string) string {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return ""
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var c struct {
		Issuer string `json:"iss"`
	}
	if json.Unmarshal(payload, &c) != nil {
		return ""
	}
	return c.Issuer
}

var errTokenInvalidated = errors.New("service account token has been invalidated")

// validateServiceAccountClaims checks the times of a verified token and
// that what it names still exists, and returns its user.
func validateServiceAccountClaims(ctx context.Context, getter ServiceAccountGetter, now time.Time, public *jwt.Claims, private *ServiceAccountClaims) (*User, error) {
	switch err := public.ValidateWithLeeway(jwt.Expected{Time: now}, tokenLeeway); {
	case err == nil:
	case errors.Is(err, jwt.ErrExpired):
		return nil, errors.New("service account token has expired")
	case errors.Is(err, jwt.ErrNotValidYet):
		return nil, errors.New("service account token is not valid yet")
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return nil, errors.New("service account token is issued in the future")
	default:
		return nil, fmt.Errorf("service account token claims could not be validated: %w", err)
	}
	if getter == nil {
		return nil, errors.New("service account tokens cannot be validated yet")
	}
	k := private.Kubernetes
	deletedBefore := now.Add(-tokenLeeway)
	sa, err := getter.GetServiceAccount(ctx, k.Namespace, k.ServiceAccount.Name)
	if err != nil {
		return nil, err
	}
	if string(sa.UID) != k.ServiceAccount.UID {
		return nil, fmt.Errorf("service account UID (%s) does not match claim (%s)", sa.UID, k.ServiceAccount.UID)
	}
	if deletedSince(sa.DeletionTimestamp, deletedBefore) {
		return nil, fmt.Errorf("service account %s/%s has been deleted", k.Namespace, k.ServiceAccount.Name)
	}
	if ref := k.Secret; ref != nil {
		secret, err := getter.GetSecret(ctx, k.Namespace, ref.Name)
		if err != nil {
			return nil, errTokenInvalidated
		}
		if string(secret.UID) != ref.UID {
			return nil, fmt.Errorf("secret UID (%s) does not match service account secret ref claim (%s)", secret.UID, ref.UID)
		}
		if deletedSince(secret.DeletionTimestamp, deletedBefore) {
			return nil, errTokenInvalidated
		}
	}
	u := &User{Name: ServiceAccountUsername(k.Namespace, k.ServiceAccount.Name), UID: k.ServiceAccount.UID,
		Groups: ServiceAccountGroups(k.Namespace), Extra: map[string][]string{}}
	if ref := k.Pod; ref != nil {
		pod, err := getter.GetPod(ctx, k.Namespace, ref.Name)
		if err != nil {
			return nil, errTokenInvalidated
		}
		if string(pod.UID) != ref.UID {
			return nil, fmt.Errorf("pod UID (%s) does not match service account pod ref claim (%s)", pod.UID, ref.UID)
		}
		if deletedSince(pod.DeletionTimestamp, deletedBefore) {
			return nil, errTokenInvalidated
		}
		u.Extra[PodNameKey] = []string{ref.Name}
		u.Extra[PodUIDKey] = []string{ref.UID}
		if k.Node != nil && k.Node.Name != "" {
			u.Extra[NodeNameKey] = []string{k.Node.Name}
			if k.Node.UID != "" {
				u.Extra[NodeUIDKey] = []string{k.Node.UID}
			}
		}
	} else if k.Node != nil {
		return nil, errors.New("tokens bound to a node alone are not supported")
	}
	if public.ID != "" {
		u.Extra[CredentialIDKey] = []string{"JTI=" + public.ID}
	}
	if len(u.Extra) == 0 {
		u.Extra = nil
	}
	return u, nil
}

// deletedSince tells whether an object marked deleted at ts was so marked
// before t (objects with finalizers linger once deleted).
func deletedSince(ts *metav1.Time, t time.Time) bool {
	return ts != nil && ts.Time.Before(t)
}
