package jwt

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/apis/apiserver"
	certutil "k8s.io/client-go/util/cert"
)

// maxIssuers is kube's limit of jwt authenticators in one file.
const maxIssuers = 64

// Validate checks c as kube-apiserver does, with kube's messages and field
// paths, CEL compilation included. disallowedIssuers are the service
// account issuers, which no jwt issuer may claim to be.
func Validate(c *Config, disallowedIssuers []string) field.ErrorList {
	root := field.NewPath("jwt")
	if len(c.JWT) > maxIssuers {
		return field.ErrorList{field.TooMany(root, len(c.JWT), maxIssuers)}
	}
	var errs field.ErrorList
	disallowed := sets.New(disallowedIssuers...)
	issuers, discoveryURLs := sets.New[string](), sets.New[string]()
	for i, a := range c.JWT {
		p := root.Index(i)
		_, aErrs := compileAuthenticator(a, p, disallowed)
		errs = append(errs, aErrs...)
		if issuers.Has(a.Issuer.URL) {
			errs = append(errs, field.Duplicate(p.Child("issuer", "url"), a.Issuer.URL))
		}
		issuers.Insert(a.Issuer.URL)
		if a.Issuer.DiscoveryURL != "" {
			if discoveryURLs.Has(a.Issuer.DiscoveryURL) {
				errs = append(errs, field.Duplicate(p.Child("issuer", "discoveryURL"), a.Issuer.DiscoveryURL))
			}
			discoveryURLs.Insert(a.Issuer.DiscoveryURL)
		}
	}
	if c.Anonymous != nil && !c.Anonymous.Enabled && len(c.Anonymous.Conditions) > 0 {
		errs = append(errs, field.Invalid(field.NewPath("anonymous", "conditions"), c.Anonymous.Conditions, "enabled should be set to true when conditions are defined"))
	}
	return errs
}

// compiled are the CEL programs of one jwt authenticator.
type compiled struct {
	claimRules []rule
	username   *program
	groups     *program
	uid        *program
	extra      []extraMapping
	userRules  []rule
}

type rule struct {
	*program
	message string
}

type extraMapping struct {
	*program
	key string
}

// compileAuthenticator validates a and compiles its expressions; p is its
// path in the file.
func compileAuthenticator(a apiserver.JWTAuthenticator, p *field.Path, disallowed sets.Set[string]) (*compiled, field.ErrorList) {
	out := &compiled{}
	var errs field.ErrorList
	errs = append(errs, validateIssuer(a.Issuer, disallowed, p.Child("issuer"))...)
	uses := &emailUse{}
	errs = append(errs, out.compileClaimRules(a.ClaimValidationRules, p.Child("claimValidationRules"), uses)...)
	errs = append(errs, out.compileMappings(a.ClaimMappings, p.Child("claimMappings"), uses)...)
	errs = append(errs, out.compileUserRules(a.UserValidationRules, p.Child("userValidationRules"))...)
	return out, errs
}

// emailUse tracks whether expressions read claims.email and
// claims.email_verified: a username made from the email must check it.
type emailUse struct {
	email, verified bool
}

func validateIssuer(iss apiserver.Issuer, disallowed sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if iss.URL == "" {
		errs = append(errs, field.Required(p.Child("url"), ""))
	} else {
		errs = append(errs, validateURL(iss.URL, disallowed, p.Child("url"))...)
	}
	if iss.DiscoveryURL != "" {
		if iss.URL != "" && strings.TrimRight(iss.URL, "/") == strings.TrimRight(iss.DiscoveryURL, "/") {
			errs = append(errs, field.Invalid(p.Child("discoveryURL"), iss.DiscoveryURL, "discoveryURL must be different from URL"))
		}
		errs = append(errs, validateURL(iss.DiscoveryURL, nil, p.Child("discoveryURL"))...)
	}
	errs = append(errs, validateAudiences(iss.Audiences, iss.AudienceMatchPolicy, p.Child("audiences"), p.Child("audienceMatchPolicy"))...)
	if iss.CertificateAuthority != "" {
		if _, err := certutil.NewPoolFromBytes([]byte(iss.CertificateAuthority)); err != nil {
			errs = append(errs, field.Invalid(p.Child("certificateAuthority"), "<omitted>", err.Error()))
		}
	}
	if iss.EgressSelectorType != "" {
		// Capstan has no egress selector (kube's gate is beta, on by default).
		switch iss.EgressSelectorType {
		case apiserver.EgressSelectorControlPlane, apiserver.EgressSelectorCluster:
		default:
			errs = append(errs, field.Invalid(p.Child("egressSelectorType"), iss.EgressSelectorType, "egress selector must be either controlplane or cluster"))
		}
	}
	return errs
}

func validateURL(raw string, disallowed sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if disallowed.Has(raw) {
		errs = append(errs, field.Invalid(p, raw, fmt.Sprintf("URL must not overlap with disallowed issuers: %s", sets.List(disallowed))))
	}
	u, err := url.Parse(raw)
	if err != nil {
		return append(errs, field.Invalid(p, raw, err.Error()))
	}
	if u.Scheme != "https" {
		errs = append(errs, field.Invalid(p, raw, "URL scheme must be https"))
	}
	if u.User != nil {
		errs = append(errs, field.Invalid(p, raw, "URL must not contain a username or password"))
	}
	if u.RawQuery != "" {
		errs = append(errs, field.Invalid(p, raw, "URL must not contain a query"))
	}
	if u.Fragment != "" {
		errs = append(errs, field.Invalid(p, raw, "URL must not contain a fragment"))
	}
	return errs
}

func validateAudiences(auds []string, policy apiserver.AudienceMatchPolicyType, p, policyPath *field.Path) field.ErrorList {
	if len(auds) == 0 {
		return field.ErrorList{field.Required(p, fmt.Sprintf("at least one %s is required", p))}
	}
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, aud := range auds {
		if aud == "" {
			errs = append(errs, field.Required(p.Index(i), ""))
		}
		if seen.Has(aud) {
			errs = append(errs, field.Duplicate(p.Index(i), aud))
		}
		seen.Insert(aud)
	}
	switch {
	case len(auds) > 1 && policy != apiserver.AudienceMatchPolicyMatchAny:
		errs = append(errs, field.Invalid(policyPath, policy, "audienceMatchPolicy must be MatchAny for multiple audiences"))
	case len(auds) == 1 && policy != "" && policy != apiserver.AudienceMatchPolicyMatchAny:
		errs = append(errs, field.Invalid(policyPath, policy, "audienceMatchPolicy must be empty or MatchAny for single audience"))
	}
	return errs
}

func (c *compiled) compileClaimRules(rules []apiserver.ClaimValidationRule, root *field.Path, uses *emailUse) field.ErrorList {
	var errs field.ErrorList
	claims, expressions := sets.New[string](), sets.New[string]()
	for i, r := range rules {
		p := root.Index(i)
		switch {
		case r.Claim != "" && r.Expression != "":
			errs = append(errs, field.Invalid(p, r.Claim, "claim and expression can't both be set"))
		case r.Claim == "" && r.Expression == "":
			errs = append(errs, field.Required(p, "claim or expression is required"))
		case r.Claim != "":
			if r.Message != "" {
				errs = append(errs, field.Invalid(p.Child("message"), r.Message, "may not be specified when claim is set"))
			}
			if claims.Has(r.Claim) {
				errs = append(errs, field.Duplicate(p.Child("claim"), r.Claim))
			}
			claims.Insert(r.Claim)
		default:
			if r.RequiredValue != "" {
				errs = append(errs, field.Invalid(p.Child("requiredValue"), r.RequiredValue, "may not be specified when expression is set"))
			}
			if expressions.Has(r.Expression) {
				errs = append(errs, field.Duplicate(p.Child("expression"), r.Expression))
				continue
			}
			expressions.Insert(r.Expression)
			prog, err := compileAt(claimsVar, r.Expression, true, p.Child("expression"))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			uses.verified = uses.verified || selects(prog.ast, "email_verified")
			c.claimRules = append(c.claimRules, rule{program: prog, message: r.Message})
		}
	}
	return errs
}

func (c *compiled) compileMappings(m apiserver.ClaimMappings, root *field.Path, uses *emailUse) field.ErrorList {
	var errs field.ErrorList
	var err field.ErrorList
	if c.username, err = compilePrefixed(m.Username, root.Child("username"), true); err != nil {
		errs = append(errs, err...)
	} else if c.username != nil {
		uses.email = uses.email || selects(c.username.ast, "email")
		uses.verified = uses.verified || selects(c.username.ast, "email_verified")
	}
	if c.groups, err = compilePrefixed(m.Groups, root.Child("groups"), false); err != nil {
		errs = append(errs, err...)
	}
	switch uid := root.Child("uid"); {
	case m.UID.Claim != "" && m.UID.Expression != "":
		errs = append(errs, field.Invalid(uid, "", "claim and expression can't both be set"))
	case m.UID.Expression != "":
		prog, err := compileAt(claimsVar, m.UID.Expression, false, uid.Child("expression"))
		if err != nil {
			errs = append(errs, err)
		}
		c.uid = prog
	}
	keys := sets.New[string]()
	for i, e := range m.Extra {
		p := root.Child("extra").Index(i)
		key := p.Child("key")
		errs = append(errs, utilvalidation.IsDomainPrefixedPath(key, e.Key)...)
		if e.Key != strings.ToLower(e.Key) {
			errs = append(errs, field.Invalid(key, e.Key, "must be lowercase"))
		}
		if reservedDomain(e.Key) {
			errs = append(errs, field.Invalid(key, e.Key, "k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use"))
		}
		if keys.Has(e.Key) {
			errs = append(errs, field.Duplicate(key, e.Key))
			continue
		}
		keys.Insert(e.Key)
		if e.ValueExpression == "" {
			errs = append(errs, field.Required(p.Child("valueExpression"), ""))
			continue
		}
		prog, err := compileAt(claimsVar, e.ValueExpression, false, p.Child("valueExpression"))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		uses.verified = uses.verified || selects(prog.ast, "email_verified")
		c.extra = append(c.extra, extraMapping{program: prog, key: e.Key})
	}
	if uses.email && !uses.verified {
		errs = append(errs, field.Invalid(root.Child("username", "expression"), m.Username.Expression,
			"claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression"))
	}
	return errs
}

// compilePrefixed checks a username or groups mapping: a claim with a
// prefix (which may be empty), or an expression without one.
func compilePrefixed(m apiserver.PrefixedClaimOrExpression, p *field.Path, required bool) (*program, field.ErrorList) {
	switch {
	case m.Expression != "" && m.Claim != "":
		return nil, field.ErrorList{field.Invalid(p, "", "claim and expression can't both be set")}
	case m.Expression == "" && m.Claim == "":
		if required {
			return nil, field.ErrorList{field.Required(p, "claim or expression is required")}
		}
	case m.Expression != "":
		var errs field.ErrorList
		if m.Prefix != nil {
			errs = append(errs, field.Invalid(p.Child("prefix"), *m.Prefix, "may not be specified when expression is set"))
		}
		prog, err := compileAt(claimsVar, m.Expression, false, p.Child("expression"))
		if err != nil {
			errs = append(errs, err)
		}
		return prog, errs
	case m.Prefix == nil:
		return nil, field.ErrorList{field.Required(p.Child("prefix"), "prefix is required when claim is set. It can be set to an empty string to disable prefixing")}
	}
	return nil, nil
}

func (c *compiled) compileUserRules(rules []apiserver.UserValidationRule, root *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, r := range rules {
		p := root.Index(i).Child("expression")
		if r.Expression == "" {
			errs = append(errs, field.Required(p, ""))
			continue
		}
		if seen.Has(r.Expression) {
			errs = append(errs, field.Duplicate(p, r.Expression))
			continue
		}
		seen.Insert(r.Expression)
		prog, err := compileAt(userVar, r.Expression, true, p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c.userRules = append(c.userRules, rule{program: prog, message: r.Message})
	}
	return errs
}

func compileAt(variable, expression string, wantBool bool, p *field.Path) (*program, *field.Error) {
	prog, err := compile(variable, expression, wantBool)
	if err != nil {
		return nil, field.Invalid(p, expression, err.Error())
	}
	return prog, nil
}

func reservedDomain(key string) bool {
	domain, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	return domain == "kubernetes.io" || strings.HasSuffix(domain, ".kubernetes.io") ||
		domain == "k8s.io" || strings.HasSuffix(domain, ".k8s.io")
}

// selects reports whether the expression reads claims.<name> (or
// claims.?<name>) anywhere.
func selects(ast *cel.Ast, name string) bool {
	found := false
	isClaims := func(e celast.Expr) bool { return e.Kind() == celast.IdentKind && e.AsIdent() == claimsVar }
	celast.PreOrderVisit(ast.NativeRep().Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		switch e.Kind() {
		case celast.SelectKind:
			s := e.AsSelect()
			if s.FieldName() == name && isClaims(s.Operand()) {
				found = true
			}
		case celast.CallKind:
			c := e.AsCall()
			if c.FunctionName() == operators.OptSelect && len(c.Args()) == 2 && isClaims(c.Args()[0]) &&
				c.Args()[1].Kind() == celast.LiteralKind && c.Args()[1].AsLiteral() == types.String(name) {
				found = true
			}
		}
	}))
	return found
}
