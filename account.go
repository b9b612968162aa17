package flightgraph

import (
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"
)

// Role is an account's role on the portal.
type Role string

const (
	RoleDeveloper Role = "developer"
	RolePartner   Role = "partner"  // also sees partner products
	RoleStaff     Role = "staff"    // also sees internal products
	RoleOperator  Role = "operator" // approves keys and reviews limit requests
)

// ValidateAssignable checks a role an operator gives an account (Service.SetAccountRole):
// developer, partner or staff. Operators are added outside the portal (flightgraph operator add),
// so that no session, however it was obtained, can make more of them. It returns
// ECodeMissingParameter or ECodeInvalidParameter naming role.
func (r Role) ValidateAssignable() error {
	switch r {
	case RoleDeveloper, RolePartner, RoleStaff:
		return nil
	case "":
		return ParamErrorf(ECodeMissingParameter, "role", "role is required")
	case RoleOperator:
		return ParamErrorf(ECodeInvalidParameter, "role", "the operator role is not given through the portal: add operators with 'flightgraph operator add'")
	}
	return ParamErrorf(ECodeInvalidParameter, "role", "role must be developer, partner or staff, got %q", r)
}

// Account is a portal user.
type Account struct {
	ID           string    `db:"id"`
	Email        string    `db:"email"`
	Name         string    `db:"name"`
	Role         Role      `db:"role"`
	PasswordHash string    `db:"password_hash" json:"-"`
	CreatedAt    time.Time `db:"created_at"`
}

// AccountFilter selects accounts for an operator: of one role (any when empty) and whose e-mail
// contains Email, in any case (any when empty).
type AccountFilter struct {
	Role  Role
	Email string
}

// Validate checks and normalises the filter: Email is trimmed and lowered as stored addresses
// are, and has at most 254 characters, an address's most. It returns ECodeInvalidParameter naming
// role or email.
func (f *AccountFilter) Validate() error {
	switch f.Role {
	case "", RoleDeveloper, RolePartner, RoleStaff, RoleOperator:
	default:
		return ParamErrorf(ECodeInvalidParameter, "role", "role must be developer, partner, staff or operator, got %q", Clip(string(f.Role)))
	}
	f.Email = NormalizeEmail(f.Email)
	return optionalText("email", f.Email, 254)
}

// Customer is a member of the loyalty programme: the resource owner of the OAuth password grant.
type Customer struct {
	ID           string `db:"id"` // the customerId of token responses
	Username     string `db:"username"`
	Name         string `db:"name"`
	Tier         string `db:"tier"` // e.g. GOLD
	PasswordHash string `db:"password_hash" json:"-"`
}

// SignUpInput is what a developer gives to create an account.
type SignUpInput struct {
	Email    string
	Password string
	Name     string
}

// PendingSignUp is a sign-up waiting for its e-mail address to be verified: the developer account
// to create, its password hashed already, stored under the hash of the token mailed to the
// address. Only whoever reads that mailbox can turn it into an account.
type PendingSignUp struct {
	TokenHash    string    `db:"token_hash"`
	Email        string    `db:"email"`
	Name         string    `db:"name"`
	PasswordHash string    `db:"password_hash" json:"-"`
	CreatedAt    time.Time `db:"created_at"`
	ExpiresAt    time.Time `db:"expires_at"`
}

// MinPasswordLength is the shortest password accepted.
const MinPasswordLength = 10

// Validate checks and normalises the input; it returns ECodeMissingParameter or
// ECodeInvalidParameter naming the field.
func (in *SignUpInput) Validate() error {
	in.Email = NormalizeEmail(in.Email)
	in.Name = strings.TrimSpace(in.Name)
	if err := ValidateEmail(in.Email); err != nil {
		return err
	}
	if err := ValidatePassword(in.Password); err != nil {
		return err
	}
	return requiredText("name", in.Name, 100)
}

// NormalizeEmail is the form in which an account's e-mail is stored and looked up: trimmed and
// in lower case, so that "Ada@Example.com " signs in as ada@example.com.
func NormalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// ValidateEmail checks an e-mail address. It takes printable ASCII only (an international domain
// in its xn-- form): Unicode would let one mailbox have endless spellings (a soft hyphen, a
// zero-width space, full-width letters in its domain), each counted apart by every bound that
// counts per address.
func ValidateEmail(email string) error {
	if email == "" {
		return ParamErrorf(ECodeMissingParameter, "email", "email is required")
	}
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email || len(email) > 254 || !strings.Contains(email[strings.LastIndex(email, "@"):], ".") ||
		strings.IndexFunc(email, func(r rune) bool { return r < '!' || r > '~' }) >= 0 {
		return ParamErrorf(ECodeInvalidParameter, "email", "%q is not an e-mail address", Clip(email))
	}
	if strings.Contains(email[strings.LastIndex(email, "@"):], "[") {
		// A domain literal (user@[10.0.0.1]) would have the mail relay connect where the sender says.
		return ParamErrorf(ECodeInvalidParameter, "email", "%q: an address at an IP address is not accepted; use a domain name", Clip(email))
	}
	return nil
}

// CanonicalMailbox is the mailbox a normalized address delivers to, for bounds that count per
// mailbox: without its subaddress ("ada+news@example.com" is ada@example.com's), and, at the
// mail providers that ignore them, without the local part's dots.
func CanonicalMailbox(email string) string {
	local, domain, ok := strings.Cut(NormalizeEmail(email), "@")
	if !ok {
		return email
	}
	local, _, _ = strings.Cut(local, "+")
	if domain == "gmail.com" || domain == "googlemail.com" {
		local, domain = strings.ReplaceAll(local, ".", ""), "gmail.com"
	}
	return local + "@" + domain
}

// ValidatePassword checks a new password's strength.
func ValidatePassword(pw string) error {
	if pw == "" {
		return ParamErrorf(ECodeMissingParameter, "password", "password is required")
	}
	if utf8.RuneCountInString(pw) < MinPasswordLength || len(pw) > 200 {
		return ParamErrorf(ECodeInvalidParameter, "password", "password must have %d to 200 characters", MinPasswordLength)
	}
	return nil
}

// requiredText checks a mandatory free-text field.
func requiredText(field, v string, max int) error {
	if v == "" {
		return ParamErrorf(ECodeMissingParameter, field, "%s is required", field)
	}
	return optionalText(field, v, max)
}

func optionalText(field, v string, max int) error {
	if utf8.RuneCountInString(v) > max {
		return ParamErrorf(ECodeInvalidParameter, field, "%s must have at most %d characters", field, max)
	}
	if strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 && r != '\n' && r != '\t' }) {
		return ParamErrorf(ECodeInvalidParameter, field, "%s contains control characters", field)
	}
	return nil
}
