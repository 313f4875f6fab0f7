package controlplane

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"

	"github.com/capstan-io/capstan/server"
)

// The ConfigMap in which kube-apiserver tells extension API servers whom to
// trust: the client CA, and the front proxy's CA, names and headers.
const (
	authenticationTrustNamespace = metav1.NamespaceSystem
	authenticationTrustName      = "extension-apiserver-authentication"
	authenticationTrustResync    = time.Minute
)

// ClusterAuthenticationTrust is what this server adds to the
// extension-apiserver-authentication ConfigMap.
type ClusterAuthenticationTrust struct {
	// ClientCA is the PEM bundle client certificates are verified with.
	ClientCA []byte
	// RequestHeaderCA is --requestheader-client-ca-file's bundle; without
	// it no requestheader-* key is written.
	RequestHeaderCA                                             []byte
	RequestHeaderAllowedNames                                   []string
	RequestHeaderUsernameHeaders, RequestHeaderUIDHeaders       []string
	RequestHeaderGroupHeaders, RequestHeaderExtraHeaderPrefixes []string
}

// runAuthenticationTrust keeps the ConfigMap holding the union of what it
// holds and what this server trusts (servers sharing etcd each add theirs),
// rewritten every minute should someone change it.
func (c Config) runAuthenticationTrust(hc server.HookContext) error {
	client, err := kubernetes.NewForConfig(hc.LoopbackClientConfig)
	if err != nil {
		return err
	}
	trust := ClusterAuthenticationTrust{}
	if c.Authentication != nil {
		trust = c.Authentication.trust
	}
	sync := func(ctx context.Context) error { return syncAuthenticationTrust(ctx, client, trust) }
	// The first write waits for kube-system, which another hook creates.
	if err := wait.PollUntilContextTimeout(hc, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := sync(ctx); err != nil {
			c.Logger.Debug("writing the extension-apiserver-authentication ConfigMap", "err", err)
			return false, nil
		}
		return true, nil
	}); err != nil {
		return fmt.Errorf("writing the %s/%s ConfigMap: %w", authenticationTrustNamespace, authenticationTrustName, err)
	}
	go wait.UntilWithContext(hc, func(ctx context.Context) {
		if err := sync(ctx); err != nil {
			c.Logger.Warn("writing the extension-apiserver-authentication ConfigMap", "err", err)
		}
	}, authenticationTrustResync)
	return nil
}

func syncAuthenticationTrust(ctx context.Context, client kubernetes.Interface, trust ClusterAuthenticationTrust) error {
	cms := client.CoreV1().ConfigMaps(authenticationTrustNamespace)
	old, err := cms.Get(ctx, authenticationTrustName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		old = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: authenticationTrustNamespace, Name: authenticationTrustName}}
	} else if err != nil {
		return err
	}
	existing, err := trustFromData(old.Data)
	if err != nil {
		return err
	}
	data, err := mergeTrust(existing, trust, time.Now()).data()
	if err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(data, old.Data) {
		return nil
	}
	cm := old.DeepCopy()
	cm.Data = data
	if cm.ResourceVersion == "" {
		_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
	} else {
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	}
	return err
}

// data is the ConfigMap's data, as kube writes it: PEM bundles and JSON
// lists; requestheader-uid-headers only when there are some.
func (t ClusterAuthenticationTrust) data() (map[string]string, error) {
	data := map[string]string{}
	if len(t.ClientCA) > 0 {
		data["client-ca-file"] = string(t.ClientCA)
	}
	if len(t.RequestHeaderCA) == 0 {
		return data, nil
	}
	data["requestheader-client-ca-file"] = string(t.RequestHeaderCA)
	for key, list := range map[string][]string{
		"requestheader-username-headers":     t.RequestHeaderUsernameHeaders,
		"requestheader-group-headers":        t.RequestHeaderGroupHeaders,
		"requestheader-extra-headers-prefix": t.RequestHeaderExtraHeaderPrefixes,
		"requestheader-allowed-names":        t.RequestHeaderAllowedNames,
		"requestheader-uid-headers":          t.RequestHeaderUIDHeaders,
	} {
		if key == "requestheader-uid-headers" && len(list) == 0 {
			continue
		}
		if list == nil {
			list = []string{}
		}
		b, err := json.Marshal(list)
		if err != nil {
			return nil, err
		}
		data[key] = string(b)
	}
	return data, nil
}

// trustFromData reads what the ConfigMap holds.
func trustFromData(data map[string]string) (ClusterAuthenticationTrust, error) {
	t := ClusterAuthenticationTrust{ClientCA: []byte(data["client-ca-file"]), RequestHeaderCA: []byte(data["requestheader-client-ca-file"])}
	for key, out := range map[string]*[]string{
		"requestheader-username-headers":     &t.RequestHeaderUsernameHeaders,
		"requestheader-group-headers":        &t.RequestHeaderGroupHeaders,
		"requestheader-extra-headers-prefix": &t.RequestHeaderExtraHeaderPrefixes,
		"requestheader-allowed-names":        &t.RequestHeaderAllowedNames,
		"requestheader-uid-headers":          &t.RequestHeaderUIDHeaders,
	} {
		if data[key] == "" {
			continue
		}
		if err := json.Unmarshal([]byte(data[key]), out); err != nil {
			return t, fmt.Errorf("%s: %w", key, err)
		}
	}
	return t, nil
}

// mergeTrust is the union of a and b: lists without duplicates in order,
// CA bundles without duplicates or certificates expired five minutes ago.
func mergeTrust(a, b ClusterAuthenticationTrust, now time.Time) ClusterAuthenticationTrust {
	return ClusterAuthenticationTrust{
		ClientCA:                         mergeBundles(now, a.ClientCA, b.ClientCA),
		RequestHeaderCA:                  mergeBundles(now, a.RequestHeaderCA, b.RequestHeaderCA),
		RequestHeaderAllowedNames:        mergeLists(a.RequestHeaderAllowedNames, b.RequestHeaderAllowedNames),
		RequestHeaderUsernameHeaders:     mergeLists(a.RequestHeaderUsernameHeaders, b.RequestHeaderUsernameHeaders),
		RequestHeaderUIDHeaders:          mergeLists(a.RequestHeaderUIDHeaders, b.RequestHeaderUIDHeaders),
		RequestHeaderGroupHeaders:        mergeLists(a.RequestHeaderGroupHeaders, b.RequestHeaderGroupHeaders),
		RequestHeaderExtraHeaderPrefixes: mergeLists(a.RequestHeaderExtraHeaderPrefixes, b.RequestHeaderExtraHeaderPrefixes),
	}
}

func mergeLists(a, b []string) []string {
	out := []string{}
	for _, x := range append(slices.Clone(a), b...) {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func mergeBundles(now time.Time, bundles ...[]byte) []byte {
	var out []*x509.Certificate
	for _, b := range bundles {
		if len(b) == 0 {
			continue
		}
		certs, err := certutil.ParseCertsPEM(b)
		if err != nil {
			continue // an unreadable bundle in the ConfigMap is replaced
		}
		for _, c := range certs {
			if c.NotAfter.After(now.Add(-5*time.Minute)) && !slices.ContainsFunc(out, func(o *x509.Certificate) bool { return bytes.Equal(o.Raw, c.Raw) }) {
				out = append(out, c)
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	pem, err := certutil.EncodeCertificates(out...)
	if err != nil {
		return nil
	}
	return pem
}
