package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	arv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/audit"
	"github.com/capstan-io/capstan/warning"
)

// maxResponseBytes bounds what capstan reads of a webhook's answer, so
// that a broken webhook cannot fill its memory.
const maxResponseBytes = 32 << 20

// callError is a call that failed (kube's ErrCallingWebhook): the
// webhook's failure policy decides whether the write goes on.
type callError struct {
	hook   string
	reason error
}

func (e *callError) Error() string {
	return fmt.Sprintf("failed calling webhook %q: %v", e.hook, e.reason)
}

func (e *callError) Unwrap() error { return e.reason }

// call sends the review to h and returns its verified answer. A refusal
// of the write is an *apierrors.StatusError, a failed call a *callError.
func call(ctx context.Context, h *hook, req *request, mutating bool) (*admissionv1.AdmissionResponse, error) {
	if h.broken != nil {
		return nil, &callError{h.name, h.broken}
	}
	if req.attrs.DryRun && h.sideEffects != arv1.SideEffectClassNone && h.sideEffects != arv1.SideEffectClassNoneOnDryRun {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("admission webhook %q does not support dry run", h.name))
	}
	uid, body, err := req.review(h.reviewVersion)
	if err != nil {
		return nil, &callError{h.name, fmt.Errorf("could not create admission objects: %w", err)}
	}
	ctx, span := startCallSpan(ctx, h, req, uid, mutating)
	defer span.End()
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	data, err := post(ctx, h.client, body)
	if err != nil {
		return nil, &callError{h.name, fmt.Errorf("failed to call webhook: %w", err)}
	}
	resp, err := verifyResponse(data, h.reviewVersion, uid, mutating)
	if err != nil {
		return nil, &callError{h.name, fmt.Errorf("received invalid webhook response: %w", err)}
	}
	for k, v := range resp.AuditAnnotations {
		audit.AddAnnotation(ctx, h.name+"/"+k, v)
	}
	for _, w := range resp.Warnings {
		warning.Add(ctx, w)
	}
	if !resp.Allowed {
		return nil, rejection(h.name, resp.Result)
	}
	return resp, nil
}

// post sends body as kube's REST client would, the timeout in the query
// rounded up to whole seconds.
func post(ctx context.Context, c *client, body []byte) ([]byte, error) {
	u := *c.base
	if deadline, ok := ctx.Deadline(); ok {
		if t := time.Until(deadline); t > 0 {
			if r := t.Truncate(time.Second); r != t {
				t = r + time.Second
			}
			u.RawQuery = url.Values{"timeout": {t.String()}}.Encode()
		}
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, */*")
	// A wrapped transport adds the credentials itself.
	if a := c.auth; a != nil && a.wrap == nil && a.token != "" {
		r.Header.Set("Authorization", "Bearer "+a.token)
	} else if a != nil && a.wrap == nil && (a.username != "" || a.password != "") {
		r.SetBasicAuth(a.username, a.password)
	}
	resp, err := c.http.Do(r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxResponseBytes {
		return nil, fmt.Errorf("response body larger than %d bytes", maxResponseBytes)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("an error on the server (%q) has prevented the request from succeeding (status %d)", bytes.TrimSpace(data), resp.StatusCode)
	}
	return data, nil
}

// rejection is kube's error of a webhook that refused the write.
func rejection(name string, result *metav1.Status) *apierrors.StatusError {
	s := metav1.Status{Status: metav1.StatusFailure}
	if result != nil {
		s = *result
	}
	if s.Code < http.StatusBadRequest {
		s.Code = http.StatusBadRequest
	}
	if s.Status == "" || s.Status == metav1.StatusSuccess {
		s.Status = metav1.StatusFailure
	}
	denied := fmt.Sprintf("admission webhook %q denied the request", name)
	switch {
	case s.Message != "":
		s.Message = denied + ": " + s.Message
	case s.Reason != "":
		s.Message = denied + ": " + string(s.Reason)
	default:
		s.Message = denied + " without explanation"
	}
	return &apierrors.StatusError{ErrStatus: s}
}

// failure turns a failed call into the write's answer: nil when the
// webhook fails open, kube's internal error when it fails closed.
func failure(h *hook, err error) error {
	var ce *callError
	if !errors.As(err, &ce) {
		return err
	}
	if h.failOpen {
		return nil
	}
	return apierrors.NewInternalError(err)
}
