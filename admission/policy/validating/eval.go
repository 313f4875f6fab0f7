package validating

import (
	"strings"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	"github.com/capstan-io/capstan/admission/policy/generic"
)

// decision is a validation that failed, or an expression that errored.
type decision struct {
	message string
	reason  metav1.StatusReason
	index   int
	errored bool // its failure policy decides
}

// validate runs the validations and returns the failed ones.
func (p *policy) validate(e *generic.Evaluation) []decision {
	var out []decision
	for i, v := range p.validations {
		val, err := e.Eval(v.Program)
		if err != nil {
			out = append(out, decision{message: err.Error(), index: i, errored: true})
			continue
		}
		if val == types.True {
			continue
		}
		out = append(out, decision{message: p.message(e, &v), reason: v.reason, index: i})
	}
	return out
}

// message is a failed validation's message: its messageExpression's
// result, else its message, else kube's default.
func (p *policy) message(e *generic.Evaluation, v *validation) string {
	if v.msgProg != nil {
		val, err := e.Eval(generic.Program{Expression: "messageExpression", Prog: v.msgProg})
		if s, ok := valueString(val); err == nil && ok {
			s = strings.TrimSpace(s)
			if s != "" && len(s) <= celconfig.MaxEvaluatedMessageExpressionSizeBytes && !strings.Contains(s, "\n") {
				return s
			}
		}
	}
	if m := strings.TrimSpace(v.message); m != "" {
		return m
	}
	return "failed expression: " + strings.TrimSpace(v.Expression)
}

func valueString(v ref.Val) (string, bool) {
	if v == nil {
		return "", false
	}
	s, ok := v.Value().(string)
	return s, ok
}

// auditAnnotations evaluates the audit annotations: key to value, null
// and empty values left out; nil without any.
func (p *policy) auditAnnotations(e *generic.Evaluation) (map[string]string, error) {
	var out map[string]string
	for _, a := range p.annotations {
		val, err := e.Eval(a)
		if err != nil {
			return nil, err
		}
		if s, ok := valueString(val); ok && strings.TrimSpace(s) != "" {
			s = strings.TrimSpace(s)
			if len(s) > maxAuditAnnotationValueLength {
				s = s[:maxAuditAnnotationValueLength]
			}
			if out == nil {
				out = map[string]string{}
			}
			out[a.Name] = s
		}
	}
	return out, nil
}

// maxAuditAnnotationValueLength is kube's cut of an annotation's value.
const maxAuditAnnotationValueLength = 10 * 1024
