package metrics

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The authentication and authorization families: kube's
// endpoints/filters metrics.
var (
	authenticatedUsers = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "authenticated_user_requests",
		Help: "Counter of authenticated requests broken out by username.",
	}, []string{"username"})
	authenticationAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "authentication_attempts",
		Help: "Counter of authenticated attempts.",
	}, []string{"result"})
	authenticationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "authentication_duration_seconds",
		Help:    "Authentication duration in seconds broken out by result.",
		Buckets: exponential(0.001, 2, 15),
	}, []string{"result"})
	clientCertificateExpiration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "apiserver_client_certificate_expiration_seconds",
		Help: "Distribution of the remaining lifetime on the certificate used to authenticate a request.",
		Buckets: []float64{0, 1800, 3600, 7200, 21600, 43200, 86400, 172800, 345600, 604800,
			2592000, 7776000, 15552000, 31104000},
	})
	authorizationAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "authorization_attempts_total",
		Help: "Counter of authorization attempts broken down by result. It can be either 'allowed', 'denied', 'no-opinion' or 'error'.",
	}, []string{"result"})
	authorizationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "authorization_duration_seconds",
		Help:    "Authorization duration in seconds broken out by result.",
		Buckets: exponential(0.001, 2, 15),
	}, []string{"result"})
)

func init() {
	register(authenticatedUsers, authenticationAttempts, authenticationDuration, clientCertificateExpiration,
		authorizationAttempts, authorizationDuration)
}

// Authentication records one authentication started at start: "error"
// when an authenticator failed, "failure" when none accepted the
// request, else "success" and the user, its name bounded as kube bounds
// it.
func Authentication(start time.Time, ok bool, err error, user string) {
	k := authnKey{result: "success"}
	switch {
	case err != nil:
		k.result = "error"
	case !ok:
		k.result = "failure"
	default:
		k.user = compressUsername(user)
	}
	a := authentications.get(k)
	if a.user != nil {
		a.user.Inc()
	}
	a.attempts.Inc()
	a.duration.Observe(time.Since(start).Seconds())
}

// authnKey is an authentication's result and, on success, its bounded
// user name.
type authnKey struct{ result, user string }

type authnSeries struct {
	user, attempts prometheus.Counter // user is nil unless the result is success
	duration       prometheus.Observer
}

var authentications = newSeriesCache(func(k authnKey) authnSeries {
	a := authnSeries{
		attempts: authenticationAttempts.WithLabelValues(k.result),
		duration: authenticationDuration.WithLabelValues(k.result),
	}
	if k.result == "success" {
		a.user = authenticatedUsers.WithLabelValues(k.user)
	}
	return a
})

// ClientCertificateExpiration records the remaining lifetime of a
// request's client certificate, before it is verified.
func ClientCertificateExpiration(remaining time.Duration) {
	clientCertificateExpiration.Observe(remaining.Seconds())
}

// compressUsername keeps a few well-known names and folds the rest, so
// that user names never grow the series.
func compressUsername(name string) string {
	switch {
	case name == "admin" || name == "client" || name == "kube_proxy" || name == "kubelet" ||
		name == "system:serviceaccount:kube-system:default":
		return name
	case strings.Contains(name, "@"):
		return "email_id"
	}
	return "other"
}

// Authorization records one authorization decision started at start:
// "allowed", "denied", "no-opinion" or "error".
func Authorization(start time.Time, result string) {
	a := authorizations.get(result)
	a.attempts.Inc()
	a.duration.Observe(time.Since(start).Seconds())
}

type authzSeries struct {
	attempts prometheus.Counter
	duration prometheus.Observer
}

var authorizations = newSeriesCache(func(result string) authzSeries {
	return authzSeries{authorizationAttempts.WithLabelValues(result), authorizationDuration.WithLabelValues(result)}
})
