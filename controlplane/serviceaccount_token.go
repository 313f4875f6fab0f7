package controlplane

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/keyutil"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/endpoints"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/request"
	"github.com/capstan-io/capstan/server"
	"github.com/capstan-io/capstan/warning"
)

// Service account token defaults and limits, as kube's.
const (
	// DefaultServiceAccountIssuer is capstan's --service-account-issuer
	// when none is given (kube-apiserver requires the flag; this is the
	// issuer kubeadm configures).
	DefaultServiceAccountIssuer = "https://kubernetes.default.svc.cluster.local"
	// ServiceAccountKeyName is the signing key capstan generates in its PKI
	// directory when --service-account-signing-key-file is not given, next
	// to its public key ServiceAccountPublicKeyName.
	ServiceAccountKeyName       = "sa.key"
	ServiceAccountPublicKeyName = "sa.pub"

	defaultTokenExpirationSeconds = 3600
	minTokenExpirationSeconds     = 600
	maxTokenExpirationSeconds     = 1 << 32
	// discoveryMaxAge is the Cache-Control max-age of the OIDC discovery
	// documents.
	discoveryMaxAge = 3600

	openIDConfigPath = "/.well-known/openid-configuration"
	jwksPath         = "/openid/v1/jwks"
)

// loadServiceAccountKeys returns the signing key (from signingKeyFile, or
// generated in certDir) and the verification keys (from keyFiles, or the
// signing key's).
func loadServiceAccountKeys(signingKeyFile string, keyFiles []string, certDir string) (crypto.Signer, []crypto.PublicKey, error) {
	if signingKeyFile == "" {
		signingKeyFile = filepath.Join(certDir, ServiceAccountKeyName)
		if err := ensureServiceAccountKey(signingKeyFile, filepath.Join(certDir, ServiceAccountPublicKeyName)); err != nil {
			return nil, nil, fmt.Errorf("service account signing key: %w", err)
		}
	}
	k, err := keyutil.PrivateKeyFromFile(signingKeyFile)
	if err != nil {
		return nil, nil, fmt.Errorf("--service-account-signing-key-file: %w", err)
	}
	signer, ok := k.(crypto.Signer)
	if !ok {
		return nil, nil, fmt.Errorf("--service-account-signing-key-file: %T is not a signing key", k)
	}
	if len(keyFiles) == 0 {
		return signer, []crypto.PublicKey{signer.Public()}, nil
	}
	var pubs []crypto.PublicKey
	for _, f := range keyFiles {
		keys, err := keyutil.PublicKeysFromFile(f)
		if err != nil {
			return nil, nil, fmt.Errorf("--service-account-key-file: %w", err)
		}
		for _, k := range keys {
			pubs = append(pubs, k)
		}
	}
	return signer, pubs, nil
}

// ensureServiceAccountKey writes an ECDSA P-256 key pair unless keyFile
// exists.
func ensureServiceAccountKey(keyFile, pubFile string) error {
	if _, err := os.Stat(keyFile); err == nil {
		return nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return err
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	if err := os.MkdirAll(filepath.Dir(keyFile), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(pubFile, pubPEM, 0o644); err != nil {
		return err
	}
	tmp := keyFile + ".tmp"
	if err := os.WriteFile(tmp, keyPEM, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, keyFile)
}

// saGetter reads service accounts, pods and secrets for the token
// authenticator once the kube server has built their stores: from the
// watch cache first, from etcd when the cache does not have the object.
type saGetter struct {
	stores atomic.Pointer[saStores]
}

type saStores struct{ serviceAccounts, pods, secrets *registry.Store }

var _ authn.ServiceAccountGetter = (*saGetter)(nil)

var errStoresNotReady = apierrors.NewServiceUnavailable("service account tokens cannot be validated yet")

func (g *saGetter) get(ctx context.Context, pick func(*saStores) *registry.Store, namespace, name string) (runtime.Object, error) {
	s := g.stores.Load()
	if s == nil {
		return nil, errStoresNotReady
	}
	store := pick(s)
	ctx = request.WithNamespace(ctx, namespace)
	obj, err := store.Get(ctx, name, &metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		obj, err = store.Get(ctx, name, &metav1.GetOptions{})
	}
	return obj, err
}

func (g *saGetter) GetServiceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error) {
	obj, err := g.get(ctx, func(s *saStores) *registry.Store { return s.serviceAccounts }, namespace, name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.ServiceAccount), nil
}

func (g *saGetter) GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	obj, err := g.get(ctx, func(s *saStores) *registry.Store { return s.pods }, namespace, name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Pod), nil
}

func (g *saGetter) GetSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	obj, err := g.get(ctx, func(s *saStores) *registry.Store { return s.secrets }, namespace, name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Secret), nil
}

// installServiceAccountTokens serves serviceaccounts/token in core/v1,
// points the token authenticator at the core stores and serves the OIDC
// discovery documents of the issuer.
func (c Config) installServiceAccountTokens(s *server.Server, core *builtGroup) error {
	a := c.Authentication
	if a == nil || a.signer == nil {
		return nil
	}
	a.getter.stores.Store(&saStores{serviceAccounts: core.stores["serviceaccounts"], pods: core.stores["pods"], secrets: core.stores["secrets"]})
	secrets, err := kubernetes.NewForConfig(s.LoopbackClientConfig())
	if err != nil {
		return err
	}
	a.secrets.Store(secrets)
	tokens := &TokenREST{
		serviceAccounts: core.stores["serviceaccounts"], pods: core.stores["pods"], secrets: core.stores["secrets"], nodes: core.stores["nodes"],
		signer: a.signer, audiences: a.APIAudiences, maxExpiration: a.maxExpiration, extendExpiration: a.extendExpiration,
	}
	v := &core.group.Versions[0]
	v.Resources = append(v.Resources, endpoints.Resource{Name: "serviceaccounts/token", Kind: "TokenRequest",
		KindGroupVersion: &authenticationv1.SchemeGroupVersion, Storage: tokens, NoFieldManager: true})
	if a.openIDConfig != nil {
		s.Handle(openIDConfigPath, discoveryHandler(a.openIDConfig, "application/json"))
		s.Handle(jwksPath, discoveryHandler(a.jwks, "application/jwk-set+json"))
	}
	return nil
}

// discoveryHandler serves a fixed document to GETs.
func discoveryHandler(body []byte, contentType string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", fmt.Sprintf("public, max-age=%d", discoveryMaxAge))
		_, _ = w.Write(body)
	})
}

// openIDDocuments builds the OIDC discovery document of issuer and the key
// set of keys. The documents are not served (nil, nil) when the issuer is
// not an https URL without query and fragment, as in kube.
func openIDDocuments(issuer, jwksURI, externalAddress string, keys []crypto.PublicKey) (config, jwks []byte, err error) {
	iss, err := url.Parse(issuer)
	if err != nil || iss.Scheme != "https" || iss.RawQuery != "" || iss.Fragment != "" {
		return nil, nil, nil
	}
	if jwksURI == "" {
		if externalAddress == "" {
			return nil, nil, nil
		}
		jwksURI = (&url.URL{Scheme: "https", Host: externalAddress, Path: jwksPath}).String()
	}
	set, err := authn.JSONWebKeySet(keys)
	if err != nil {
		return nil, nil, err
	}
	var algs []string
	for _, k := range set.Keys {
		if !slices.Contains(algs, k.Algorithm) {
			algs = append(algs, k.Algorithm)
		}
	}
	slices.Sort(algs)
	config, err = json.Marshal(struct {
		Issuer        string   `json:"issuer"`
		JWKSURI       string   `json:"jwks_uri"`
		ResponseTypes []string `json:"response_types_supported"`
		SubjectTypes  []string `json:"subject_types_supported"`
		SigningAlgs   []string `json:"id_token_signing_alg_values_supported"`
	}{issuer, jwksURI, []string{"id_token"}, []string{"public"}, algs})
	if err != nil {
		return nil, nil, err
	}
	jwks, err = json.Marshal(set)
	return config, jwks, err
}

// TokenRequest errors name the TokenRequest kind.
var tokenRequestGroupKind = schema.GroupKind{Group: authenticationv1.GroupName, Kind: "TokenRequest"}

// TokenREST is serviceaccounts/token: it issues tokens of a service
// account, optionally bound to a pod or a secret. Nothing is stored.
type TokenREST struct {
	serviceAccounts, pods, secrets, nodes *registry.Store
	signer                                *authn.TokenSigner
	audiences                             []string
	maxExpiration                         time.Duration
	extendExpiration                      bool
}

var _ rest.NamedCreater = (*TokenREST)(nil)

// New returns an empty TokenRequest.
func (*TokenREST) New() runtime.Object { return &authenticationv1.TokenRequest{} }

// NamespaceScoped is true.
func (*TokenREST) NamespaceScoped() bool { return true }

// Create issues a token for the service account name.
func (r *TokenREST) Create(ctx context.Context, name string, obj runtime.Object, validate rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	req, ok := obj.(*authenticationv1.TokenRequest)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a TokenRequest: %T", obj))
	}
	namespace := request.NamespaceFrom(ctx)
	if namespace == "" {
		return nil, apierrors.NewBadRequest("namespace is required")
	}
	req = req.DeepCopy()
	if req.Name != "" && req.Name != name {
		return nil, apierrors.NewInvalid(tokenRequestGroupKind, name, field.ErrorList{
			field.Invalid(field.NewPath("metadata", "name"), req.Name, "must match the service account name if specified")})
	}
	if req.Namespace != "" && req.Namespace != namespace {
		return nil, apierrors.NewInvalid(tokenRequestGroupKind, name, field.ErrorList{
			field.Invalid(field.NewPath("metadata", "namespace"), req.Namespace, "must match the service account namespace if specified")})
	}
	saObj, err := r.serviceAccounts.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	sa := saObj.(*corev1.ServiceAccount)
	if req.UID != "" && req.UID != sa.UID {
		return nil, apierrors.NewConflict(schema.GroupResource{Group: tokenRequestGroupKind.Group, Resource: tokenRequestGroupKind.Kind}, name,
			fmt.Errorf("the UID in the token request (%s) does not match the UID of the service account (%s)", req.UID, sa.UID))
	}
	if req.Spec.ExpirationSeconds == nil {
		req.Spec.ExpirationSeconds = ptrInt64(defaultTokenExpirationSeconds)
	}
	if len(req.Spec.Audiences) == 0 {
		req.Spec.Audiences = slices.Clone(r.audiences)
	}
	req.Name, req.Namespace, req.UID = sa.Name, sa.Namespace, sa.UID
	now := time.Now()
	req.CreationTimestamp = metav1.NewTime(now)
	req.Status = authenticationv1.TokenRequestStatus{}
	if errs := validateTokenRequest(req); len(errs) > 0 {
		return nil, apierrors.NewInvalid(tokenRequestGroupKind, "", errs)
	}
	if validate != nil {
		if err := validate(ctx, req.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	binding, err := r.bind(ctx, name, req.Spec.BoundObjectRef)
	if err != nil {
		return nil, err
	}
	if max := int64(r.maxExpiration / time.Second); max > 0 && *req.Spec.ExpirationSeconds > max {
		warning.Add(ctx, fmt.Sprintf("requested expiration of %d seconds shortened to %d seconds", *req.Spec.ExpirationSeconds, max))
		req.Spec.ExpirationSeconds = ptrInt64(max)
	}
	exp := time.Duration(*req.Spec.ExpirationSeconds) * time.Second
	valid := r.extended(binding, req.Spec, exp)
	public, private := authn.ServiceAccountClaimsFor(sa, binding, now, valid, req.Spec.Audiences)
	if valid != exp {
		private.Kubernetes.WarnAfter = jwt.NewNumericDate(now.Add(exp))
	}
	token, err := r.signer.Sign(public, private)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("failed to generate token: %w", err))
	}
	req.Status = authenticationv1.TokenRequestStatus{Token: token, ExpirationTimestamp: metav1.NewTime(now.Add(exp))}
	return req, nil
}

// kubeletTokenSeconds is the lifetime the kubelet asks for a pod's
// projected token; extendedTokenSeconds is how long such a token is valid
// under --service-account-extend-token-expiration, so that clients that
// do not reread their token keep working while the stale uses are audited.
const (
	kubeletTokenSeconds  = 60*60 + 7
	extendedTokenSeconds = 365 * 24 * 60 * 60
)

// extended is the validity of a token asked for with spec for exp: a
// year for a pod's token with the kubelet's lifetime and only the
// server's audiences, when the extension is on; exp otherwise.
func (r *TokenREST) extended(b authn.TokenBinding, spec authenticationv1.TokenRequestSpec, exp time.Duration) time.Duration {
	if !r.extendExpiration || b.Pod == nil || *spec.ExpirationSeconds != kubeletTokenSeconds {
		return exp
	}
	for _, aud := range spec.Audiences {
		if !slices.Contains(r.audiences, aud) {
			return exp
		}
	}
	return extendedTokenSeconds * time.Second
}

// bind finds the object a token is to be bound to: it must exist (with the
// reference's UID, if given), and a pod must run as the service account.
func (r *TokenREST) bind(ctx context.Context, saName string, ref *authenticationv1.BoundObjectReference) (authn.TokenBinding, error) {
	var b authn.TokenBinding
	if ref == nil {
		return b, nil
	}
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	var uid string
	switch {
	case gvk.Group == "" && gvk.Kind == "Pod":
		obj, err := r.pods.Get(ctx, ref.Name, &metav1.GetOptions{})
		if err != nil {
			return b, err
		}
		b.Pod = obj.(*corev1.Pod)
		if b.Pod.Spec.ServiceAccountName != saName {
			return b, apierrors.NewBadRequest(fmt.Sprintf("cannot bind token for serviceaccount %q to pod running with different serviceaccount name.", saName))
		}
		uid = string(b.Pod.UID)
		if node := b.Pod.Spec.NodeName; node != "" && r.nodes != nil {
			nctx := request.WithNamespace(ctx, "")
			obj, err := r.nodes.Get(nctx, node, &metav1.GetOptions{ResourceVersion: "0"})
			if err != nil {
				obj, err = r.nodes.Get(nctx, node, &metav1.GetOptions{})
			}
			switch {
			case apierrors.IsNotFound(err):
				b.Node = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}
			case err != nil:
				return b, apierrors.NewInternalError(err)
			default:
				b.Node = obj.(*corev1.Node)
			}
		}
	case gvk.Group == "" && gvk.Kind == "Secret":
		obj, err := r.secrets.Get(ctx, ref.Name, &metav1.GetOptions{})
		if err != nil {
			return b, err
		}
		b.Secret = obj.(*corev1.Secret)
		uid = string(b.Secret.UID)
	default:
		return b, apierrors.NewBadRequest(fmt.Sprintf("cannot bind token to object of type %s", gvk.String()))
	}
	if ref.UID != "" && string(ref.UID) != uid {
		return b, apierrors.NewConflict(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, ref.Name,
			fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
	}
	return b, nil
}

// validateTokenRequest checks a defaulted TokenRequest as kube does.
func validateTokenRequest(req *authenticationv1.TokenRequest) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	exp := *req.Spec.ExpirationSeconds
	if exp < minTokenExpirationSeconds {
		errs = append(errs, field.Invalid(spec.Child("expirationSeconds"), exp, "may not specify a duration less than 10 minutes"))
	}
	if exp > maxTokenExpirationSeconds {
		errs = append(errs, field.Invalid(spec.Child("expirationSeconds"), exp, "may not specify a duration larger than 2^32 seconds"))
	}
	return errs
}

func ptrInt64(v int64) *int64 { return &v }
