package webhook

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"path"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/transport"
	"sigs.k8s.io/yaml"
)

// Credentials are the client credentials webhooks are called with: the
// users of the kubeconfig a WebhookAdmission configuration names, chosen
// by the webhook's host as kube chooses them. The zero value has none.
type Credentials struct {
	kubeconfig *clientcmdapi.Config
}

// webhookAdmission is the WebhookAdmission configuration of the
// MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins.
type webhookAdmission struct {
	metav1.TypeMeta    `json:",inline"`
	KubeConfigFile     string `json:"kubeConfigFile"`
	StaticManifestsDir string `json:"staticManifestsDir,omitempty"`
}

// The versions kube reads the configuration in.
var webhookAdmissionKinds = map[string]string{
	"apiserver.config.k8s.io/v1":       "WebhookAdmissionConfiguration",
	"apiserver.config.k8s.io/v1alpha1": "WebhookAdmission",
}

// LoadCredentials reads a plugin's WebhookAdmission configuration (nil:
// none) and the kubeconfig it names.
func LoadCredentials(config []byte) (*Credentials, error) {
	if config == nil {
		return &Credentials{}, nil
	}
	var wa webhookAdmission
	if err := yaml.UnmarshalStrict(config, &wa); err != nil {
		return nil, err
	}
	if kind, ok := webhookAdmissionKinds[wa.APIVersion]; !ok || kind != wa.Kind {
		return nil, fmt.Errorf("no kind %q is registered for version %q", wa.Kind, wa.APIVersion)
	}
	if wa.StaticManifestsDir != "" {
		return nil, fmt.Errorf("staticManifestsDir is not supported by capstan")
	}
	if wa.KubeConfigFile == "" {
		return &Credentials{}, nil
	}
	if !path.IsAbs(wa.KubeConfigFile) {
		return nil, field.Invalid(field.NewPath("kubeConfigFile"), wa.KubeConfigFile, "must be an absolute file path")
	}
	kc, err := clientcmd.LoadFromFile(wa.KubeConfigFile)
	if err != nil {
		return nil, err
	}
	return &Credentials{kubeconfig: kc}, nil
}

// user is the kubeconfig user of target (host:port): by the exact name,
// then by wildcards of its domain (*.example.com), the same without the
// port when it is 443, then "*", then the current context's user.
func (c *Credentials) user(target string) *clientcmdapi.AuthInfo {
	if c == nil || c.kubeconfig == nil {
		return nil
	}
	users := c.kubeconfig.AuthInfos
	byName := func(t string) *clientcmdapi.AuthInfo {
		if u, ok := users[t]; ok {
			return u
		}
		steps := strings.Split(t, ".")
		for i := 1; i < len(steps); i++ {
			if u, ok := users["*."+strings.Join(steps[i:], ".")]; ok {
				return u
			}
		}
		return nil
	}
	if u := byName(target); u != nil {
		return u
	}
	if host, port, err := net.SplitHostPort(target); err == nil && port == "443" {
		if u := byName(host); u != nil {
			return u
		}
	}
	if u, ok := users["*"]; ok {
		return u
	}
	if ctx, ok := c.kubeconfig.Contexts[c.kubeconfig.CurrentContext]; ok {
		return users[ctx.AuthInfo]
	}
	return nil
}

// auth is what a client adds to its calls from a kubeconfig user.
type auth struct {
	token              string
	username, password string
	certificate        *tls.Certificate
	// wrap, when set, adds the credentials client-go's transport adds for
	// an exec plugin or impersonation (and the token or password with
	// them), in place of the headers above.
	wrap func(http.RoundTripper) (http.RoundTripper, error)
}

func authOf(u *clientcmdapi.AuthInfo) (*auth, error) {
	if u == nil {
		return &auth{}, nil
	}
	if u.AuthProvider != nil {
		return nil, fmt.Errorf("auth provider not supported")
	}
	a := &auth{token: u.Token, username: u.Username, password: u.Password}
	if a.token == "" && u.TokenFile != "" {
		data, err := os.ReadFile(u.TokenFile)
		if err != nil {
			return nil, err
		}
		a.token = strings.TrimSpace(string(data))
	}
	if u.Exec != nil || u.Impersonate != "" || u.ImpersonateUID != "" || len(u.ImpersonateGroups) > 0 || len(u.ImpersonateUserExtra) > 0 {
		if err := a.clientGoWrapper(u); err != nil {
			return nil, err
		}
	}
	certPEM, keyPEM := u.ClientCertificateData, u.ClientKeyData
	var err error
	if len(certPEM) == 0 && u.ClientCertificate != "" {
		if certPEM, err = os.ReadFile(u.ClientCertificate); err != nil {
			return nil, err
		}
	}
	if len(keyPEM) == 0 && u.ClientKey != "" {
		if keyPEM, err = os.ReadFile(u.ClientKey); err != nil {
			return nil, err
		}
	}
	if len(certPEM) > 0 {
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, err
		}
		a.certificate = &cert
	}
	return a, nil
}

// clientGoWrapper makes a.wrap: client-go's exec plugin and impersonation
// round trippers, as kube's webhook client gets them from its rest
// config. A client certificate an exec plugin returns is not used.
func (a *auth) clientGoWrapper(u *clientcmdapi.AuthInfo) error {
	cfg := &rest.Config{BearerToken: a.token, Username: a.username, Password: a.password, ExecProvider: u.Exec,
		Impersonate: rest.ImpersonationConfig{UserName: u.Impersonate, UID: u.ImpersonateUID, Groups: u.ImpersonateGroups, Extra: u.ImpersonateUserExtra}}
	tc, err := cfg.TransportConfig()
	if err != nil {
		return err
	}
	a.wrap = func(rt http.RoundTripper) (http.RoundTripper, error) { return transport.HTTPWrappersForConfig(tc, rt) }
	return nil
}
