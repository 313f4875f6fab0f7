package filters

import (
	"math/rand/v2"
	"net/http"
	"regexp"
	"strings"
)

// WithCORS answers cross-origin requests from the allowed origins: their
// responses carry the Access-Control-* headers and a preflight OPTIONS
// ends with 204. Requests from other origins pass unchanged (the browser
// then refuses the answer). No origins, no filter.
func WithCORS(allowed []*regexp.Regexp) Filter {
	if len(allowed) == 0 {
		return nil
	}
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			origin := r.Header.Get("Origin")
			if origin == "" || !originAllowed(origin, allowed) {
				h.ServeHTTP(w, r)
				return
			}
			hd := w.Header()
			hd.Set("Access-Control-Allow-Origin", origin)
			hd.Set("Access-Control-Allow-Methods", "POST, GET, OPTIONS, PUT, DELETE, PATCH")
			hd.Set("Access-Control-Allow-Headers", "Content-Type, Content-Length, Accept-Encoding, X-CSRF-Token, Authorization, X-Requested-With, If-Modified-Since")
			hd.Set("Access-Control-Expose-Headers", "Date")
			hd.Set("Access-Control-Allow-Credentials", "true")
			if r.Method == http.MethodOptions {
				w.WriteHeader(http.StatusNoContent)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
}

func originAllowed(origin string, allowed []*regexp.Regexp) bool {
	for _, re := range allowed {
		if re.MatchString(origin) {
			return true
		}
	}
	return false
}

// WithHSTS adds Strict-Transport-Security with the directives to every
// response that does not set it itself. No directives, no filter.
func WithHSTS(directives []string) Filter {
	if len(directives) == 0 {
		return nil
	}
	value := strings.Join(directives, "; ")
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, ok := w.Header()["Strict-Transport-Security"]; !ok {
				w.Header().Set("Strict-Transport-Security", value)
			}
			h.ServeHTTP(w, r)
		})
	}
}

// WithProbabilisticGoaway closes the HTTP/2 connection of a chance
// fraction of requests once they are answered (Connection: close makes
// Go's HTTP/2 server send GOAWAY), so that clients behind a load balancer
// spread over the replicas. Other requests on the connection finish.
func WithProbabilisticGoaway(chance float64) Filter {
	if chance <= 0 {
		return nil
	}
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ProtoMajor == 2 && rand.Float64() < chance {
				w.Header().Set("Connection", "close")
			}
			h.ServeHTTP(w, r)
		})
	}
}

// WithCacheControl marks every answer that does not say otherwise as not
// to be cached by shared caches ("no-cache, private"), as kube does: API
// answers carry credentials-dependent data.
func WithCacheControl() Filter {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, ok := w.Header()["Cache-Control"]; !ok {
				w.Header().Set("Cache-Control", "no-cache, private")
			}
			h.ServeHTTP(w, r)
		})
	}
}
