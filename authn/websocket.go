package authn

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"
)

// bearerProtocolPrefix starts the WebSocket subprotocol that carries a
// bearer token: browsers cannot set an Authorization header on a
// WebSocket, but they can offer subprotocols.
const bearerProtocolPrefix = "base64url.bearer.authorization.k8s.io."

const webSocketProtocolHeader = "Sec-Websocket-Protocol"

// NewWebSocketProtocol returns an Authenticator of the bearer token a
// WebSocket upgrade offers as the subprotocol
// "base64url.bearer.authorization.k8s.io.<base64url(token)>", handed to
// tokens as NewBearerToken hands them. Once the token is accepted it is
// taken out of the offered subprotocols, so that no handler echoes it;
// the client must offer at least one other.
func NewWebSocketProtocol(tokens TokenAuthenticator, apiAudiences []string) Authenticator {
	return AuthenticatorFunc(func(r *http.Request) (*Response, bool, error) {
		if !wsstream.IsWebSocketRequest(r) {
			return nil, false, nil
		}
		token, others, err := protocolToken(r.Header.Values(webSocketProtocolHeader))
		if err != nil || token == "" {
			return nil, false, err
		}
		resp, ok, err := authenticateToken(r, tokens, apiAudiences, token)
		if ok {
			r.Header.Set(webSocketProtocolHeader, strings.Join(others, ","))
		}
		return resp, ok, err
	})
}

// protocolToken finds the token among the offered subprotocols and
// returns it with the others, with kube's errors.
func protocolToken(headers []string) (token string, others []string, err error) {
	seen := false
	for _, h := range headers {
		for _, p := range strings.Split(h, ",") {
			p = strings.TrimSpace(p)
			encoded, ok := strings.CutPrefix(p, bearerProtocolPrefix)
			if !ok {
				others = append(others, p)
				continue
			}
			if seen {
				return "", nil, errors.New("multiple base64.bearer.authorization tokens specified")
			}
			seen = true
			decoded, err := base64.RawURLEncoding.DecodeString(encoded)
			if err != nil {
				return "", nil, errors.New("invalid base64.bearer.authorization token encoding")
			}
			if !utf8.Valid(decoded) {
				return "", nil, errors.New("invalid base64.bearer.authorization token")
			}
			token = string(decoded)
		}
	}
	if token != "" && len(others) == 0 {
		return "", nil, errors.New("missing additional subprotocol")
	}
	return token, others, nil
}
