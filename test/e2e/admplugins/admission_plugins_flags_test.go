package admplugins

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/app"
)

// TestAdmissionPluginFlags: the deprecated --admission-control is the whole
// set; --disable-admission-plugins takes from kube's default set.
// (--enable-admission-plugins: test/auth's TestNodeRestriction.)
func TestAdmissionPluginFlags(t *testing.T) {
	t.Run("admission-control without NamespaceLifecycle", func(t *testing.T) {
		e := e2eutil.Start(t, "--admission-control=AlwaysAdmit")
		// Nothing checks the namespace exists, as in kube with this set.
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "anywhere"}}
		if _, err := e.Clientset.CoreV1().ConfigMaps("no-such-namespace").Create(e2eutil.Ctx(t), cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create in a missing namespace without NamespaceLifecycle: %v", err)
		}
	})
	t.Run("defaults refuse a missing namespace", func(t *testing.T) {
		e := e2eutil.Start(t, "--disable-admission-plugins=ServiceAccount")
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "nowhere"}}
		_, err := e.Clientset.CoreV1().ConfigMaps("no-such-namespace").Create(e2eutil.Ctx(t), cm, metav1.CreateOptions{})
		e2eutil.WantStatus(t, err, 404, metav1.StatusReasonNotFound, `namespaces "no-such-namespace" not found`)
	})
}

// TestAdmissionPluginFlagsRefused: capstan does not start with flags kube
// refuses, nor with a plugin it does not implement.
func TestAdmissionPluginFlagsRefused(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugin: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"unknown", []string{"--enable-admission-plugins=NoSuchPlugin"}, `enable-admission-plugins plugin "NoSuchPlugin" is unknown`},
		{"overlap", []string{"--enable-admission-plugins=AlwaysDeny", "--disable-admission-plugins=AlwaysDeny"},
			"[AlwaysDeny] in enable-admission-plugins and disable-admission-plugins overlapped"},
		{"exclusive", []string{"--admission-control=AlwaysAdmit", "--disable-admission-plugins=AlwaysDeny"},
			"admission-control and enable-admission-plugins/disable-admission-plugins flags are mutually exclusive"},
		{"image policy webhook without its configuration", []string{"--enable-admission-plugins=ImagePolicyWebhook"},
			`couldn't init admission plugin "ImagePolicyWebhook": no config specified`},
		{"event rate limit without its configuration", []string{"--enable-admission-plugins=EventRateLimit"},
			`couldn't init admission plugin "EventRateLimit": limits: Invalid value: null: must not be empty`},
		{"bad configuration file", []string{"--admission-control-config-file", bad},
			`failed to read plugin config: strict decoding error: unknown field "plugin"`},
		{"missing configuration file", []string{"--admission-control-config-file", filepath.Join(dir, "none.yaml")},
			`failed to read plugin config: unable to read admission control configuration from`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := app.NewOptions()
			fs := pflag.NewFlagSet("capstan", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(append([]string{"--data-dir", t.TempDir(), "--secure-port", "0", "--bind-address", "127.0.0.1", "--unsafe-no-fsync"}, tc.flags...)); err != nil {
				t.Fatal(err)
			}
			c, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err := app.Run(c, o, io.Discard, func(*app.Process) { t.Error("capstan started") })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
