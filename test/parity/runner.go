package parity

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Target is a server the sequences run against.
type Target struct {
	Name string
	URL  string // https://127.0.0.1:port
	// Admin is a client with system:masters credentials; Anonymous trusts
	// the server's CA and sends no credentials of its own (steps with As
	// send a token).
	Admin, Anonymous *http.Client
}

// Run runs seq in a new namespace and returns the normalised answers.
func (tg *Target) Run(ctx context.Context, seq Sequence) ([]Answer, error) {
	suffix := make([]byte, 3)
	if _, err := rand.Read(suffix); err != nil {
		return nil, err
	}
	ns := "parity-" + hex.EncodeToString(suffix)
	if err := tg.namespace(ctx, http.MethodPost, "/api/v1/namespaces", `{"metadata":{"name":"`+ns+`"}}`); err != nil {
		return nil, err
	}
	defer tg.namespace(context.WithoutCancel(ctx), http.MethodDelete, "/api/v1/namespaces/"+ns, "") //nolint:errcheck // best effort
	vars := map[string]string{"ns": ns}
	norm := normalizer{ns: ns}
	answers := make([]Answer, 0, len(seq.Steps))
	for _, st := range seq.Steps {
		a, raw, err := tg.step(ctx, st, vars, norm)
		if err != nil {
			return answers, fmt.Errorf("%s: %w", stepKey(seq.Name, st.ID), err)
		}
		for name, path := range st.Save {
			if vars[name], err = lookup(raw, path); err != nil {
				return answers, fmt.Errorf("%s: save %s: %w", stepKey(seq.Name, st.ID), name, err)
			}
		}
		answers = append(answers, a)
	}
	return answers, nil
}

func (tg *Target) namespace(ctx context.Context, method, path, body string) error {
	req, err := http.NewRequestWithContext(ctx, method, tg.URL+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := tg.Admin.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body) //nolint:errcheck // drained for reuse
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %s", method, path, resp.Status)
	}
	return nil
}

// step sends one step's request (again, until it answers Until, within a
// minute) and returns its normalised answer and the raw body.
func (tg *Target) step(ctx context.Context, st Step, vars map[string]string, norm normalizer) (Answer, []byte, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		a, raw, err := tg.send(ctx, st, vars, norm)
		if err != nil || st.Until == 0 || a.Status == st.Until || time.Now().After(deadline) {
			return a, raw, err
		}
		select {
		case <-ctx.Done():
			return a, raw, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (tg *Target) send(ctx context.Context, st Step, vars map[string]string, norm normalizer) (Answer, []byte, error) {
	put := func(s string) string {
		for k, v := range vars {
			s = strings.ReplaceAll(s, "{"+k+"}", v)
		}
		return s
	}
	req, err := http.NewRequestWithContext(ctx, st.Method(), tg.URL+put(st.Target()), strings.NewReader(put(st.Body)))
	if err != nil {
		return Answer{}, nil, err
	}
	for k, v := range st.Headers {
		req.Header.Set(k, put(v))
	}
	client := tg.Admin
	if st.As != "" {
		client = tg.Anonymous
		req.Header.Set("Authorization", "Bearer "+vars[st.As])
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return Answer{}, nil, err
		}
		// A server that resets the stream or closes the connection
		// answers that way; the error's text (stream ids) is not compared.
		return Answer{ID: st.ID, Req: st.Req, Body: "no HTTP answer"}, nil, nil
	}
	defer resp.Body.Close()
	raw, err := readBody(resp.Body, st.Events)
	if err != nil {
		return Answer{}, nil, err
	}
	a := Answer{ID: st.ID, Req: st.Req, Status: resp.StatusCode, Headers: map[string]string{}}
	for _, h := range comparedHeaders {
		if v := resp.Header.Values(h); len(v) > 0 {
			a.Headers[h] = norm.text(strings.Join(v, ", "))
		}
	}
	if resp.Header.Get("Audit-Id") != "" {
		a.Headers["Audit-Id"] = "present"
	}
	if st.Compare != "status" {
		a.Body = norm.body(resp.Header.Get("Content-Type"), raw)
	}
	if st.Compare == "shape" {
		a.Body = shape(a.Body)
	}
	return a, raw, nil
}

// readBody reads a whole body, or the first events of a watch stream.
func readBody(body io.Reader, events int) ([]byte, error) {
	if events == 0 {
		return io.ReadAll(body)
	}
	dec := json.NewDecoder(body)
	var out []byte
	for range events {
		var ev json.RawMessage
		if err := dec.Decode(&ev); err != nil {
			return out, fmt.Errorf("after %d bytes of events: %w", len(out), err)
		}
		out = append(append(out, ev...), '\n')
	}
	return out, nil
}

// lookup returns the value at a dotted path of a JSON body as a string.
func lookup(raw []byte, path string) (string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	for _, p := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return "", fmt.Errorf("no %s", path)
		}
		v = m[p]
	}
	switch v := v.(type) {
	case string:
		return v, nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case nil:
		return "", fmt.Errorf("no %s", path)
	}
	return fmt.Sprint(v), nil
}
