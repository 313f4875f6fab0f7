package authn

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// webhookKubeconfig writes a kubeconfig naming srv, trusting its
// certificate, with path appended to its URL.
func webhookKubeconfig(t *testing.T, srv *httptest.Server, path string) string {
	t.Helper()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["hook"] = &clientcmdapi.Cluster{Server: srv.URL + path, CertificateAuthorityData: caPEM}
	cfg.AuthInfos["apiserver"] = &clientcmdapi.AuthInfo{Token: "apiserver-secret"}
	cfg.Contexts["hook"] = &clientcmdapi.Context{Cluster: "hook", AuthInfo: "apiserver"}
	cfg.CurrentContext = "hook"
	file := filepath.Join(t.TempDir(), "webhook.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, file); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestWebhookToken(t *testing.T) {
	var calls atomic.Int32
	var lastReview authenticationv1.TokenReview
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path != "/authenticate" || r.Header.Get("Authorization") != "Bearer apiserver-secret" {
			http.Error(w, "who are you", http.StatusForbidden)
			return
		}
		var review authenticationv1.TokenReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		lastReview = review
		out := authenticationv1.TokenReview{TypeMeta: review.TypeMeta}
		switch review.Spec.Token {
		case "alice":
			out.Status = authenticationv1.TokenReviewStatus{Authenticated: true, Audiences: []string{"api"},
				User: authenticationv1.UserInfo{Username: "alice", UID: "a-1", Groups: []string{"dev"}, Extra: map[string]authenticationv1.ExtraValue{"k": {"v"}}}}
		case "denied":
			out.Status = authenticationv1.TokenReviewStatus{Error: "token revoked"}
		case "busy":
			http.Error(w, "try again", http.StatusInternalServerError)
			return
		case "garbage":
			w.Write([]byte("{not json"))
			return
		}
		json.NewEncoder(w).Encode(out)
	}))
	defer srv.Close()
	fast := wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 3}
	a, err := NewWebhookToken(WebhookOptions{KubeconfigFile: webhookKubeconfig(t, srv, "/authenticate"), Version: "v1", ImplicitAudiences: []string{"api"}, Backoff: fast})
	if err != nil {
		t.Fatal(err)
	}
	ctx := WithAudiences(context.Background(), []string{"api", "other"})
	tests := []struct {
		token     string
		ctx       context.Context
		want      *User
		wantErr   string
		wantCalls int32
	}{
		{token: "alice", ctx: ctx, want: &User{Name: "alice", UID: "a-1", Groups: []string{"dev"}, Extra: map[string][]string{"k": {"v"}}}, wantCalls: 1},
		{token: "alice", ctx: WithAudiences(context.Background(), []string{"vault"}), wantCalls: 1},
		{token: "nobody", ctx: ctx, wantCalls: 1},
		{token: "denied", ctx: ctx, wantErr: "token revoked", wantCalls: 1},
		{token: "busy", ctx: ctx, wantErr: "500", wantCalls: 3},
		{token: "garbage", ctx: ctx, wantErr: "decoding", wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.token, func(t *testing.T) {
			calls.Store(0)
			resp, ok, err := a.AuthenticateToken(tt.ctx, tt.token)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if ok != (tt.want != nil) || (ok && !reflect.DeepEqual(resp.User, tt.want)) {
				t.Errorf("got %v %+v, want %+v", ok, resp, tt.want)
			}
			if got := calls.Load(); got != tt.wantCalls {
				t.Errorf("%d calls, want %d", got, tt.wantCalls)
			}
		})
	}
	if lastReview.APIVersion != "authentication.k8s.io/v1" || lastReview.Kind != "TokenReview" ||
		!reflect.DeepEqual(lastReview.Spec.Audiences, []string{"api", "other"}) {
		t.Errorf("review sent: %+v", lastReview)
	}
}

func TestWebhookTokenConfig(t *testing.T) {
	if _, err := NewWebhookToken(WebhookOptions{KubeconfigFile: "/nonexistent", Version: "v1"}); err == nil {
		t.Error("a missing kubeconfig was accepted")
	}
	for v, ok := range map[string]bool{"v1": true, "v1beta1": true, "v2": false, "": false} {
		if err := ValidateWebhookVersion(v); (err == nil) != ok {
			t.Errorf("ValidateWebhookVersion(%q) = %v", v, err)
		}
	}
}
