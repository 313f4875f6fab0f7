package server

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/internal/kmstest"
	"github.com/capstan-io/capstan/internal/testkit"
)

// Keys of the tests' configurations (base64 of 32 bytes).
const (
	encKey1 = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	encKey2 = "YWJjZGVmMDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODk="
)

// encryptionConfig writes an EncryptionConfiguration whose resources
// entries are given as YAML list items, and returns its path.
func encryptionConfig(t *testing.T, path string, entries ...string) string {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "encryption.yaml")
	}
	body := "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n" + strings.Join(entries, "")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// entry is one resources entry: resources and providers as YAML flow lists.
func entry(resources string, providers ...string) string {
	return "- resources: " + resources + "\n  providers:\n" + strings.Join(providers, "")
}

func keyed(provider string, keys ...string) string {
	s := "  - " + provider + ":\n      keys:\n"
	for i := 0; i+1 < len(keys); i += 2 {
		s += "      - name: " + keys[i] + "\n        secret: " + keys[i+1] + "\n"
	}
	return s
}

const identityProvider = "  - identity: {}\n"

func kmsProvider(name, endpoint string) string {
	return "  - kms:\n      apiVersion: v2\n      name: " + name + "\n      endpoint: " + endpoint + "\n      timeout: 3s\n"
}

// TestEncryptionAtRest is the done-when for every provider: a secret
// created through the API is unreadable in etcd and readable through the
// API, by get, list and watch, before and after a restart.
func TestEncryptionAtRest(t *testing.T) {
	plugin, err := kmstest.Start(filepath.Join(t.TempDir(), "kms.sock"), "kms-key-1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(plugin.Stop)
	for _, tc := range []struct{ name, provider, prefix string }{
		{"aescbc", keyed("aescbc", "key1", encKey1), "k8s:enc:aescbc:v1:key1:"},
		{"aesgcm", keyed("aesgcm", "key1", encKey1), "k8s:enc:aesgcm:v1:key1:"},
		{"secretbox", keyed("secretbox", "key1", encKey1), "k8s:enc:secretbox:v1:key1:"},
		{"kms", kmsProvider("testkms", plugin.Endpoint), "k8s:enc:kms:v2:testkms:\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := encryptionConfig(t, "", entry("[secrets]", tc.provider))
			e := e2eutil.Start(t, "--encryption-provider-config", cfg)
			ns := e.Namespace(t)
			plain := "plain-" + tc.name + "-password"
			created := e.CreateSecret(t, ns, "s", plain)
			key := "/registry/secrets/" + ns + "/s"
			e.WantRaw(t, key, tc.prefix, plain)
			e.WantSecret(t, ns, "s", plain)

			list, err := e.Clientset.CoreV1().Secrets(ns).List(e2eutil.Ctx(t), metav1.ListOptions{})
			if err != nil || len(list.Items) != 1 || string(list.Items[0].Data["password"]) != plain {
				t.Fatalf("list: %v %+v", err, list)
			}
			w, err := e.Clientset.CoreV1().Secrets(ns).Watch(e2eutil.Ctx(t), metav1.ListOptions{ResourceVersion: created.ResourceVersion})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			created.Data["password"] = []byte(plain + "-2")
			if _, err := e.Clientset.CoreV1().Secrets(ns).Update(e2eutil.Ctx(t), created, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			ev := <-w.ResultChan()
			if s, ok := ev.Object.(*corev1.Secret); ev.Type != watch.Modified || !ok || string(s.Data["password"]) != plain+"-2" {
				t.Fatalf("watch event %s %#v", ev.Type, ev.Object)
			}
			e.WantRaw(t, key, tc.prefix, plain)

			e.Restart(t)
			e.WantSecret(t, ns, "s", plain+"-2")
			list, err = e.Clientset.CoreV1().Secrets(ns).List(e2eutil.Ctx(t), metav1.ListOptions{ResourceVersion: "0"})
			if err != nil || len(list.Items) != 1 || string(list.Items[0].Data["password"]) != plain+"-2" {
				t.Fatalf("list from the watch cache after a restart: %v %+v", err, list)
			}
		})
	}
}

// TestEncryptionResources: entries by resource name, "*.<group>" and "*.*";
// events.k8s.io events are core events in etcd and in the configuration.
func TestEncryptionResources(t *testing.T) {
	cfg := encryptionConfig(t, "",
		entry("[secrets, configmaps]", keyed("aescbc", "key1", encKey1)),
		entry("['*.apps']", keyed("secretbox", "key1", encKey1)),
		entry("[crontabs.stable.example.com]", keyed("aescbc", "key2", encKey2)),
		entry("['*.*']", keyed("aesgcm", "key1", encKey1)))
	e := e2eutil.Start(t, "--encryption-provider-config", cfg)
	ns := e.Namespace(t)
	e.ConfigMap(t, ns, "cm", nil)
	e.WantRaw(t, "/registry/configmaps/"+ns+"/cm", "k8s:enc:aescbc:v1:key1:", "")
	e.CreateSecret(t, ns, "s", "v")
	e.WantRaw(t, "/registry/secrets/"+ns+"/s", "k8s:enc:aescbc:v1:key1:", "")

	one := int32(1)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DeploymentSpec{
		Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
	if _, err := e.Clientset.AppsV1().Deployments(ns).Create(e2eutil.Ctx(t), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.WantRaw(t, "/registry/deployments/"+ns+"/d", "k8s:enc:secretbox:v1:key1:", "busybox")

	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa"}}
	if _, err := e.Clientset.CoreV1().ServiceAccounts(ns).Create(e2eutil.Ctx(t), sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.WantRaw(t, "/registry/serviceaccounts/"+ns+"/sa", "k8s:enc:aesgcm:v1:key1:", "")

	ev := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "ev"}, EventTime: metav1.NowMicro(),
		ReportingController: "test/ctl", ReportingInstance: "i", Action: "Do", Reason: "Because", Type: "Normal",
		Regarding: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: ns}}
	if _, err := e.Clientset.EventsV1().Events(ns).Create(e2eutil.Ctx(t), ev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.WantRaw(t, "/registry/events/"+ns+"/ev", "k8s:enc:aesgcm:v1:key1:", "Because")
	if _, err := e.Clientset.EventsV1().Events(ns).Get(e2eutil.Ctx(t), "ev", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}

	// Custom resources by their group-qualified name, CRDs by "*.*".
	e.CreateCRD(t, e2eutil.CronTabCRD)
	e.WantRaw(t, "/registry/apiextensions.k8s.io/customresourcedefinitions/crontabs.stable.example.com", "k8s:enc:aesgcm:v1:key1:", "CronTab")
	crontabs := e.Dynamic(t).Resource(schema.GroupVersionResource{Group: "stable.example.com", Version: "v1", Resource: "crontabs"}).Namespace(ns)
	ct := e2eutil.FromYAML(t, "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: ct}\nspec: {cronSpec: '* * * * */5', image: plain-image, replicas: 1}\n")
	if _, err := crontabs.Create(e2eutil.Ctx(t), ct, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.WantRaw(t, "/registry/stable.example.com/crontabs/"+ns+"/ct", "k8s:enc:aescbc:v1:key2:", "plain-image")
	got, err := crontabs.Get(e2eutil.Ctx(t), "ct", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if image, _, _ := unstructured.NestedString(got.Object, "spec", "image"); image != "plain-image" {
		t.Fatalf("custom resource read back as %v", got.Object)
	}
}

// TestEncryptionKeyRotation rotates aescbc key1 to key2 as kube's
// documentation does: key2 added first (a restart), every secret
// rewritten with kubectl replace, key1 removed (a restart).
func TestEncryptionKeyRotation(t *testing.T) {
	testkit.Kubectl(t) // build kubectl before the server starts
	cfg := encryptionConfig(t, "", entry("[secrets]", keyed("aescbc", "key1", encKey1)))
	e := e2eutil.Start(t, "--encryption-provider-config", cfg)
	namespaces := []string{e.Namespace(t), e.Namespace(t)}
	for _, ns := range namespaces {
		e.CreateSecret(t, ns, "a", "secret-a")
		e.CreateSecret(t, ns, "b", "secret-b")
		e.WantRaw(t, "/registry/secrets/"+ns+"/a", "k8s:enc:aescbc:v1:key1:", "secret-a")
	}

	encryptionConfig(t, cfg, entry("[secrets]", keyed("aescbc", "key2", encKey2, "key1", encKey1)))
	e.Restart(t)
	for _, ns := range namespaces {
		e.WantSecret(t, ns, "a", "secret-a")
		e.WantRaw(t, "/registry/secrets/"+ns+"/a", "k8s:enc:aescbc:v1:key1:", "")
	}
	out, stderr, err := testkit.RunKubectl(t, e.Kubeconfig, nil, "get", "secrets", "-A", "-o", "json")
	if err != nil {
		t.Fatalf("kubectl get: %v: %s", err, stderr)
	}
	// The objects are unchanged: only the stale key makes these writes.
	// (--validate=false: client-side validation adds nothing here, and its
	// OpenAPI download is slow under -race.)
	if _, stderr, err := testkit.RunKubectl(t, e.Kubeconfig, strings.NewReader(out), "replace", "--validate=false", "-f", "-"); err != nil {
		t.Fatalf("kubectl replace: %v: %s", err, stderr)
	}
	for _, ns := range namespaces {
		for _, name := range []string{"a", "b"} {
			e.WantRaw(t, "/registry/secrets/"+ns+"/"+name, "k8s:enc:aescbc:v1:key2:", "secret-")
		}
	}

	encryptionConfig(t, cfg, entry("[secrets]", keyed("aescbc", "key2", encKey2)))
	e.Restart(t)
	for _, ns := range namespaces {
		e.WantSecret(t, ns, "a", "secret-a")
		e.WantSecret(t, ns, "b", "secret-b")
	}
}

// TestEncryptionAutomaticReload: a changed file takes effect without a
// restart; values written under the old configuration still read.
func TestEncryptionAutomaticReload(t *testing.T) {
	cfg := encryptionConfig(t, "", entry("[secrets]", keyed("aescbc", "key1", encKey1)))
	e := e2eutil.Start(t, "--encryption-provider-config", cfg, "--encryption-provider-config-automatic-reload",
		"--encryption-provider-config-reload-interval", "50ms")
	ns := e.Namespace(t)
	e.CreateSecret(t, ns, "old", "old-value")
	e.WantRaw(t, "/registry/secrets/"+ns+"/old", "k8s:enc:aescbc:v1:key1:", "old-value")
	if body, err := e.Clientset.Discovery().RESTClient().Get().AbsPath("/healthz/kms-providers").DoRaw(e2eutil.Ctx(t)); err != nil || string(body) != "ok" {
		t.Fatalf("/healthz/kms-providers with reload: %v %s", err, body)
	}

	encryptionConfig(t, cfg, entry("[secrets]", keyed("secretbox", "key2", encKey2), keyed("aescbc", "key1", encKey1)))
	// Write until a value shows the new configuration.
	for i := 0; ; i++ {
		name := e2eutil.Sprintf("new-%d", i)
		e.CreateSecret(t, ns, name, "new-value")
		if bytes.HasPrefix(e.EtcdValue(t, "/registry/secrets/"+ns+"/"+name), []byte("k8s:enc:secretbox:v1:key2:")) {
			break
		}
		if e2eutil.Ctx(t).Err() != nil {
			t.Fatal("the new configuration was never used")
		}
	}
	e.WantSecret(t, ns, "old", "old-value")
}

// TestEncryptionProviderOrder: an identity-first configuration still reads
// encrypted data and writes plain; data written before encryption reads
// with identity listed last and is encrypted on its next write, even a
// no-op one; without identity it is kube's corrupt object error.
func TestEncryptionProviderOrder(t *testing.T) {
	cfg := encryptionConfig(t, "", entry("[secrets]", keyed("aesgcm", "key1", encKey1)))
	e := e2eutil.Start(t, "--encryption-provider-config", cfg)
	ns := e.Namespace(t)
	e.CreateSecret(t, ns, "enc", "enc-value")
	e.WantRaw(t, "/registry/secrets/"+ns+"/enc", "k8s:enc:aesgcm:v1:key1:", "enc-value")

	encryptionConfig(t, cfg, entry("[secrets]", identityProvider, keyed("aesgcm", "key1", encKey1)))
	e.Restart(t)
	e.WantSecret(t, ns, "enc", "enc-value")
	e.CreateSecret(t, ns, "plain", "plain-value")
	e.WantRaw(t, "/registry/secrets/"+ns+"/plain", "k8s\x00", "")

	encryptionConfig(t, cfg, entry("[secrets]", keyed("aesgcm", "key1", encKey1), identityProvider))
	e.Restart(t)
	e.WantSecret(t, ns, "plain", "plain-value")
	s, err := e.Clientset.CoreV1().Secrets(ns).Get(e2eutil.Ctx(t), "plain", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Clientset.CoreV1().Secrets(ns).Update(e2eutil.Ctx(t), s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.WantRaw(t, "/registry/secrets/"+ns+"/plain", "k8s:enc:aesgcm:v1:key1:", "plain-value")

	e.EtcdPut(t, "/registry/secrets/"+ns+"/unencrypted", e.EtcdValue(t, "/registry/secrets/"+ns+"/enc"))
	_, err = e.Clientset.CoreV1().Secrets(ns).Get(e2eutil.Ctx(t), "unencrypted", metav1.GetOptions{})
	e2eutil.WantStatus(t, err, 500, metav1.StatusReasonInternalError, "Internal error occurred: StorageError: corrupt object, Code: 7, "+
		"Key: /secrets/"+ns+"/unencrypted, ResourceVersion: 0, AdditionalErrorMsg: data from the storage is not transformable revision=0: "+
		"cipher: message authentication failed")
}

// TestEncryptionUnreadable: values no provider of the resource reads give
// kube's errors, on get and on list.
func TestEncryptionUnreadable(t *testing.T) {
	cfg := encryptionConfig(t, "", entry("[secrets]", keyed("aescbc", "key1", encKey1)))
	e := e2eutil.Start(t, "--encryption-provider-config", cfg)
	ns := e.Namespace(t)
	e.ConfigMap(t, ns, "plain", nil)
	e.EtcdPut(t, "/registry/secrets/"+ns+"/plain", e.EtcdValue(t, "/registry/configmaps/"+ns+"/plain"))
	e.EtcdPut(t, "/registry/secrets/"+ns+"/other", []byte("k8s:enc:secretbox:v1:key1:0123456789012345678901234567890123456789"))
	for _, name := range []string{"plain", "other"} {
		_, err := e.Clientset.CoreV1().Secrets(ns).Get(e2eutil.Ctx(t), name, metav1.GetOptions{})
		e2eutil.WantStatus(t, err, 500, metav1.StatusReasonInternalError, "Internal error occurred: StorageError: corrupt object, Code: 7, "+
			"Key: /secrets/"+ns+"/"+name+", ResourceVersion: 0, AdditionalErrorMsg: data from the storage is not transformable revision=0: "+
			"no matching prefix found")
	}
	_, err := e.Clientset.CoreV1().Secrets(ns).List(e2eutil.Ctx(t), metav1.ListOptions{Limit: 10})
	st := e2eutil.WantStatus(t, err, 500, metav1.StatusReasonStoreReadError, "failed to read one or more secrets from the storage: "+
		"StorageError: corrupt object, Code: 7, Key: /registry/secrets/"+ns+"/other, ResourceVersion: 0, "+
		"AdditionalErrorMsg: data from the storage is not transformable revision=0: no matching prefix found (and 1 more)")
	if st.Details == nil || len(st.Details.Causes) != 2 || st.Details.Causes[1].Field != "/registry/secrets/"+ns+"/plain" {
		t.Fatalf("details: %+v", st.Details)
	}
	// A resource the configuration does not name refuses encrypted data.
	e.EtcdPut(t, "/registry/configmaps/"+ns+"/enc", e.EtcdValue(t, "/registry/secrets/"+ns+"/other"))
	_, err = e.Clientset.CoreV1().ConfigMaps(ns).Get(e2eutil.Ctx(t), "enc", metav1.GetOptions{})
	e2eutil.WantStatus(t, err, 500, metav1.StatusReasonInternalError, "Internal error occurred: StorageError: corrupt object, Code: 7, "+
		"Key: /configmaps/"+ns+"/enc, ResourceVersion: 0, AdditionalErrorMsg: data from the storage is not transformable revision=0: "+
		"identity transformer tried to read encrypted data")
}

// TestEncryptionBadConfig: a configuration kube refuses stops the start
// with kube's message.
func TestEncryptionBadConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	head := "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n"
	for _, tc := range []struct{ name, path, want string }{
		{"missing", filepath.Join(dir, "nope.yaml"), "error while parsing file: error while loading file: error reading encryption provider configuration file"},
		{"key length", write("len.yaml", head+entry("[secrets]", keyed("aescbc", "key1", "c2hvcnQ="))),
			`resources[0].providers[0].aescbc.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 5, expected one of [16 24 32]`},
		{"unknown field", write("field.yaml", head+"- resources: [secrets]\n  providers:\n  - aescbcc: {}\n"),
			`strict decoding error: unknown field "resources[0].providers[0].aescbcc"`},
		{"no provider", write("none.yaml", head+"- resources: [secrets]\n  providers: []\n"),
			"resources[0].providers: Required value: at least one resources[0].providers is required"},
		{"kms v1", write("kmsv1.yaml", head+"- resources: [secrets]\n  providers:\n  - kms:\n      name: k\n      endpoint: unix:///tmp/x.sock\n      cachesize: 10\n"),
			"error while building transformers: KMSv1 is deprecated"},
		{"masked", write("masked.yaml", head+entry("['*.']", identityProvider)+entry("[secrets]", identityProvider)),
			`error while building transformers: resource "secrets" is masked by earlier rule "*."`},
		{"events.k8s.io", write("events.yaml", head+entry("[events.events.k8s.io]", identityProvider)),
			"'*.events.k8s.io' objects are stored using the 'events' API group in etcd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := testkit.StartError(t, "--encryption-provider-config", tc.path)
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
	err := testkit.StartError(t, "--encryption-provider-config-automatic-reload")
	if !strings.Contains(err.Error(), "--encryption-provider-config-automatic-reload must be set with --encryption-provider-config") {
		t.Fatal(err)
	}
}

// TestEncryptionKMSHealth: the KMS plugin's check is kube's kms-providers,
// in /healthz and /readyz but not /livez.
func TestEncryptionKMSHealth(t *testing.T) {
	plugin, err := kmstest.Start(filepath.Join(t.TempDir(), "kms.sock"), "kms-key-1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(plugin.Stop)
	cfg := encryptionConfig(t, "", entry("[secrets]", kmsProvider("testkms", plugin.Endpoint)))
	e := e2eutil.Start(t, "--encryption-provider-config", cfg)
	rc := e.Clientset.Discovery().RESTClient()
	for _, kind := range []string{"healthz", "readyz"} {
		body, err := rc.Get().AbsPath("/"+kind).Param("verbose", "true").DoRaw(e2eutil.Ctx(t))
		if err != nil || !strings.Contains(string(body), "[+]kms-providers ok") {
			t.Fatalf("/%s: %v\n%s", kind, err, body)
		}
	}
	body, err := rc.Get().AbsPath("/livez").Param("verbose", "true").DoRaw(e2eutil.Ctx(t))
	if err != nil || strings.Contains(string(body), "kms") {
		t.Fatalf("/livez: %v\n%s", err, body)
	}
}
