package metrics

import "github.com/prometheus/client_golang/prometheus"

// The service account token families: kube's serviceaccount metrics,
// counted when the token authenticator checks a token (not when a cached
// answer is reused).
var (
	saLegacyTokens = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "serviceaccount_legacy_tokens_total",
		Help: "Cumulative legacy service account tokens used",
	})
	saStaleTokens = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "serviceaccount_stale_tokens_total",
		Help: "Cumulative stale projected service account tokens used",
	})
	saValidTokens = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "serviceaccount_valid_tokens_total",
		Help: "Cumulative valid projected service account tokens used",
	})
	saLegacyManual = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "serviceaccount_legacy_manual_token_uses_total",
		Help: "Cumulative manually created legacy tokens used",
	})
	saLegacyAuto = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "serviceaccount_legacy_auto_token_uses_total",
		Help: "Cumulative auto-generated legacy tokens used",
	})
	saInvalidLegacyAuto = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "serviceaccount_invalid_legacy_auto_token_uses_total",
		Help: "Cumulative invalid auto-generated legacy tokens used",
	})
)

func init() {
	register(saLegacyTokens, saStaleTokens, saValidTokens, saLegacyManual, saLegacyAuto, saInvalidLegacyAuto)
}

// ServiceAccountLegacyToken counts a verified token without audiences
// (a legacy, secret-based one).
func ServiceAccountLegacyToken() { saLegacyTokens.Inc() }

// ServiceAccountBoundToken counts a valid bound token with a warn-after
// time: stale once past it.
func ServiceAccountBoundToken(stale bool) {
	if stale {
		saStaleTokens.Inc()
		return
	}
	saValidTokens.Inc()
}

// ServiceAccountSecretToken counts the use of a secret's token: one its
// service account lists (auto-generated) or not (manual); an
// auto-generated one marked invalid counts apart.
func ServiceAccountSecretToken(auto, invalid bool) {
	switch {
	case invalid:
		saInvalidLegacyAuto.Inc()
	case auto:
		saLegacyAuto.Inc()
	default:
		saLegacyManual.Inc()
	}
}
