package auth

import (
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/internal/testkit"
)

// TestExtendedPodToken: with --service-account-extend-token-expiration
// (kube's default), a pod's token asked for with the kubelet's 3607 s is
// valid for a year and says when it should have been refreshed
// (warnafter), while the TokenRequest reports the 3607 s asked for; other
// tokens, and all tokens with the flag off, are valid as asked.
func TestExtendedPodToken(t *testing.T) {
	const year, kubelet = 365 * 24 * 3600, 3607
	for _, tc := range []struct {
		name       string
		flags      []string
		boundToPod bool
		seconds    int64
		audiences  []string
		wantValid  float64
	}{
		{"pod token", nil, true, kubelet, nil, year},
		{"not bound to a pod", nil, false, kubelet, nil, kubelet},
		{"another lifetime", nil, true, 3600, nil, 3600},
		{"another audience", nil, true, kubelet, []string{"vault"}, kubelet},
		{"extension off", []string{"--service-account-extend-token-expiration=false"}, true, kubelet, nil, kubelet},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testkit.StartServer(t, tc.flags...)
			admin := s.Client(t)
			createSA(t, admin, "default", "worker")
			req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &tc.seconds, Audiences: tc.audiences}}
			if tc.boundToPod {
				pod, err := admin.CoreV1().Pods("default").Create(ctx(t), &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: "p"},
					Spec:       corev1.PodSpec{ServiceAccountName: "worker", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
				}, metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				req.Spec.BoundObjectRef = &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}
			}
			before := time.Now().Truncate(time.Second)
			got, err := admin.CoreV1().ServiceAccounts("default").CreateToken(ctx(t), "worker", req, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			c := claimsOf(t, got.Status.Token)
			if valid := c["exp"].(float64) - c["iat"].(float64); valid != tc.wantValid {
				t.Errorf("token valid for %v s, want %v", valid, tc.wantValid)
			}
			k8s, _ := c["kubernetes.io"].(map[string]any)
			warnAfter, extended := k8s["warnafter"].(float64)
			if extended != (tc.wantValid == year) || (extended && warnAfter-c["iat"].(float64) != kubelet) {
				t.Errorf("warnafter %v in %v", k8s["warnafter"], k8s)
			}
			if exp := got.Status.ExpirationTimestamp.Time; exp.Before(before.Add(time.Duration(tc.seconds)*time.Second)) ||
				exp.After(time.Now().Add(time.Duration(tc.seconds)*time.Second)) {
				t.Errorf("status.expirationTimestamp %v, want %d s from now", exp, tc.seconds)
			}
			if _, err := whoami(ctx(t), tokenClient(t, s, got.Status.Token)); err != nil && tc.audiences == nil {
				t.Errorf("the token does not authenticate: %v", err)
			}
		})
	}
}

// TestShortenedTokenWarns: a token longer than
// --service-account-max-token-expiration is shortened, with kube's warning.
func TestShortenedTokenWarns(t *testing.T) {
	s := testkit.StartServer(t, "--service-account-max-token-expiration", "2h")
	createSA(t, s.Client(t), "default", "robot")
	_, stderr, err := testkit.RunKubectl(t, s.Kubeconfig, nil, "create", "token", "robot", "--duration", "10h")
	if err != nil {
		t.Fatal(err)
	}
	if want := "Warning: requested expiration of 36000 seconds shortened to 7200 seconds"; !strings.Contains(stderr, want) {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
}
