package flowcontrol

import (
	"fmt"
	"math"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	flowcontrolv1beta3 "k8s.io/api/flowcontrol/v1beta3"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/apis/flowcontrol/bootstrap"
)

// Bounds of a queuing configuration, as kube sets them.
const (
	maxQueues = 10 * 1000 * 1000
	// maxHashBits is the entropy a shuffle-sharding hash provides; a deck
	// and hand needing more cannot be dealt from it.
	maxHashBits = 60
)

var (
	priorityLevelTypes = []string{string(flowcontrolv1.PriorityLevelEnablementExempt), string(flowcontrolv1.PriorityLevelEnablementLimited)}
	limitResponseTypes = []string{string(flowcontrolv1.LimitResponseTypeQueue), string(flowcontrolv1.LimitResponseTypeReject)}
)

// ValidatePriorityLevel returns the errors of a priority level beyond its
// metadata; old is nil on create. kube 1.37 checks the members of the
// type unions declaratively: those errors, detail-less, come last, and are
// skipped on update for parts that did not change.
func ValidatePriorityLevel(pl, old *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	var errs field.ErrorList
	if _, ok := pl.Annotations[flowcontrolv1beta3.PriorityLevelPreserveZeroConcurrencySharesKey]; ok {
		errs = append(errs, field.Forbidden(field.NewPath("metadata", "annotations"),
			fmt.Sprintf("annotation '%s' is forbidden", flowcontrolv1beta3.PriorityLevelPreserveZeroConcurrencySharesKey)))
	}
	specPath := field.NewPath("spec")
	errs = append(errs, validatePriorityLevelSpec(pl.Name, &pl.Spec, specPath)...)
	errs = append(errs, validateMandatoryLevel(pl, specPath)...)
	errs = append(errs, validateConditionTypes(levelConditionTypes(pl.Status.Conditions), field.NewPath("status", "conditions"))...)
	var oldSpec *flowcontrolv1.PriorityLevelConfigurationSpec
	if old != nil {
		oldSpec = &old.Spec
	}
	return append(errs, declarativeSpecErrors(&pl.Spec, oldSpec, specPath)...)
}

func levelConditionTypes(cs []flowcontrolv1.PriorityLevelConfigurationCondition) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, string(c.Type))
	}
	return out
}

func validatePriorityLevelSpec(name string, spec *flowcontrolv1.PriorityLevelConfigurationSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if (name == flowcontrolv1.PriorityLevelConfigurationNameExempt) != (spec.Type == flowcontrolv1.PriorityLevelEnablementExempt) {
		errs = append(errs, field.Invalid(path.Child("type"), spec.Type, "must be 'Exempt' if and only if `name` is 'exempt'"))
	}
	switch spec.Type {
	case flowcontrolv1.PriorityLevelEnablementExempt:
		if e := spec.Exempt; e != nil {
			errs = append(errs, validateShares(e.NominalConcurrencyShares, path.Child("exempt", "nominalConcurrencyShares"))...)
			errs = append(errs, validateLendable(e.LendablePercent, path.Child("exempt", "lendablePercent"))...)
		}
	case flowcontrolv1.PriorityLevelEnablementLimited:
		if spec.Limited != nil {
			errs = append(errs, validateLimited(spec.Limited, path.Child("limited"))...)
		}
	case "":
		// Required, declaratively.
	default:
		errs = append(errs, field.NotSupported(path.Child("type"), spec.Type, priorityLevelTypes))
	}
	return errs
}

func validateShares(shares *int32, path *field.Path) field.ErrorList {
	if shares != nil && *shares < 0 {
		return field.ErrorList{field.Invalid(path, *shares, "must be a non-negative integer")}
	}
	return nil
}

func validateLendable(percent *int32, path *field.Path) field.ErrorList {
	if percent != nil && (*percent < 0 || *percent > 100) {
		return field.ErrorList{field.Invalid(path, *percent, "must be between 0 and 100, inclusive")}
	}
	return nil
}

func validateLimited(l *flowcontrolv1.LimitedPriorityLevelConfiguration, path *field.Path) field.ErrorList {
	// Defaulting has set the shares; kube's internal type has no nil.
	var shares int32
	if l.NominalConcurrencyShares != nil {
		shares = *l.NominalConcurrencyShares
	}
	errs := validateShares(&shares, path.Child("nominalConcurrencyShares"))
	lr := &l.LimitResponse
	switch lr.Type {
	case flowcontrolv1.LimitResponseTypeQueue:
		if lr.Queuing != nil {
			errs = append(errs, validateQueuing(lr.Queuing, path.Child("limitResponse", "queuing"))...)
		}
	case flowcontrolv1.LimitResponseTypeReject, "":
		// Queuing forbidden, or the type required: declaratively.
	default:
		errs = append(errs, field.NotSupported(path.Child("limitResponse", "type"), lr.Type, limitResponseTypes))
	}
	errs = append(errs, validateLendable(l.LendablePercent, path.Child("lendablePercent"))...)
	if b := l.BorrowingLimitPercent; b != nil && *b < 0 {
		errs = append(errs, field.Invalid(path.Child("borrowingLimitPercent"), *b, "if specified, must be a non-negative integer"))
	}
	return errs
}

// validateQueuing also checks that a hand can be dealt from the queues
// with the hash bits shuffle sharding has.
func validateQueuing(q *flowcontrolv1.QueuingConfiguration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q.QueueLengthLimit <= 0 {
		errs = append(errs, field.Invalid(path.Child("queueLengthLimit"), q.QueueLengthLimit, "must be positive"))
	}
	if q.Queues <= 0 {
		errs = append(errs, field.Invalid(path.Child("queues"), q.Queues, "must be positive"))
	} else if q.Queues > maxQueues {
		errs = append(errs, field.Invalid(path.Child("queues"), q.Queues, fmt.Sprintf("must not be greater than %d", maxQueues)))
	}
	hand := path.Child("handSize")
	switch {
	case q.HandSize <= 0:
		errs = append(errs, field.Invalid(hand, q.HandSize, "must be positive"))
	case q.HandSize > q.Queues:
		errs = append(errs, field.Invalid(hand, q.HandSize, fmt.Sprintf("should not be greater than queues (%d)", q.Queues)))
	case entropyBits(q.Queues, q.HandSize) > maxHashBits:
		errs = append(errs, field.Invalid(hand, q.HandSize,
			fmt.Sprintf("required entropy bits of deckSize %d and handSize %d should not be greater than %d", q.Queues, q.HandSize, maxHashBits)))
	}
	return errs
}

// entropyBits is how many random bits dealing a hand of handSize from
// deckSize cards takes.
func entropyBits(deckSize, handSize int32) int {
	return int(math.Ceil(math.Log2(float64(deckSize)) * float64(handSize)))
}

// validateMandatoryLevel: catch-all's spec is fixed, and so is exempt's
// but for its spec.exempt.
func validateMandatoryLevel(pl *flowcontrolv1.PriorityLevelConfiguration, path *field.Path) field.ErrorList {
	for _, mandatory := range bootstrap.MandatoryPriorityLevelConfigurations() {
		if mandatory.Name != pl.Name {
			continue
		}
		have := pl.Spec
		msg := fmt.Sprintf("spec of '%s' must equal the fixed value", pl.Name)
		if pl.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt {
			have.Exempt = mandatory.Spec.Exempt
			msg = fmt.Sprintf("spec of '%s' except the 'spec.exempt' field must equal the fixed value", pl.Name)
		}
		if !apiequality.Semantic.DeepEqual(have, mandatory.Spec) {
			return field.ErrorList{field.Invalid(path, goNamed{pl.Spec}, msg)}
		}
	}
	return nil
}

// declarativeSpecErrors are kube's declarative checks of the spec's
// unions: the member the type names is required, the others forbidden.
// On update, a part equal to old is not checked again.
func declarativeSpecErrors(spec, old *flowcontrolv1.PriorityLevelConfigurationSpec, path *field.Path) field.ErrorList {
	if old != nil && apiequality.Semantic.DeepEqual(spec, old) {
		return nil
	}
	var errs field.ErrorList
	typeSame := old != nil && spec.Type == old.Type
	if !(typeSame && apiequality.Semantic.DeepEqual(spec.Exempt, old.Exempt)) &&
		spec.Type != flowcontrolv1.PriorityLevelEnablementExempt && spec.Exempt != nil {
		errs = append(errs, field.Forbidden(path.Child("exempt"), ""))
	}
	if !(typeSame && apiequality.Semantic.DeepEqual(spec.Limited, old.Limited)) {
		errs = append(errs, unionMember(spec.Type == flowcontrolv1.PriorityLevelEnablementLimited, spec.Limited != nil, path.Child("limited"))...)
	}
	if spec.Type == "" && !typeSame {
		errs = append(errs, field.Required(path.Child("type"), ""))
	}
	if spec.Limited != nil {
		var oldResponse *flowcontrolv1.LimitResponse
		if old != nil && old.Limited != nil {
			oldResponse = &old.Limited.LimitResponse
		}
		errs = append(errs, declarativeResponseErrors(&spec.Limited.LimitResponse, oldResponse, path.Child("limited", "limitResponse"))...)
	}
	return errs
}

func declarativeResponseErrors(lr, old *flowcontrolv1.LimitResponse, path *field.Path) field.ErrorList {
	if old != nil && apiequality.Semantic.DeepEqual(lr, old) {
		return nil
	}
	var errs field.ErrorList
	typeSame := old != nil && lr.Type == old.Type
	if !(typeSame && apiequality.Semantic.DeepEqual(lr.Queuing, old.Queuing)) {
		errs = append(errs, unionMember(lr.Type == flowcontrolv1.LimitResponseTypeQueue, lr.Queuing != nil, path.Child("queuing"))...)
	}
	if lr.Type == "" && !typeSame {
		errs = append(errs, field.Required(path.Child("type"), ""))
	}
	return errs
}

// unionMember: a member is required when selected and forbidden otherwise.
func unionMember(selected, set bool, path *field.Path) field.ErrorList {
	switch {
	case selected && !set:
		return field.ErrorList{field.Required(path, "")}
	case !selected && set:
		return field.ErrorList{field.Forbidden(path, "")}
	}
	return nil
}
