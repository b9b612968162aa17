package flightgraph

import (
	"strings"
	"time"
)

// AccessRequestStatus is the state of a request for a partner or internal API.
type AccessRequestStatus string

const (
	AccessRequestPending AccessRequestStatus = "pending"
	AccessRequestGranted AccessRequestStatus = "granted"
	AccessRequestRefused AccessRequestStatus = "refused"
)

// AccessRequest is a developer's request for a partner or internal API, which the account's role
// does not open ("on request" in the catalogue): the spec's "contact the operator for access". An
// operator answers it with a role that opens the API (Role) or a refusal with a reason (Reply).
type AccessRequest struct {
	ID          string              `db:"id"`
	AccountID   string              `db:"account_id"`
	Product     string              `db:"product"`
	Description string              `db:"description"`
	ExpectedUse string              `db:"expected_use"`
	Status      AccessRequestStatus `db:"status"`
	Role        Role                `db:"role"` // the role granted
	Reply       string              `db:"reply"`
	ReviewedBy  string              `db:"reviewed_by"`
	CreatedAt   time.Time           `db:"created_at"`
	ReviewedAt  *time.Time          `db:"reviewed_at"`
}

// AccessRequestInput is a developer's request for a partner or internal API.
type AccessRequestInput struct {
	API         string
	Description string
	ExpectedUse string
	// RequestToken, when given, makes the request once however often it is sent (RequestToken).
	RequestToken string
}

// Validate checks and trims the request; it returns ECodeMissingParameter or
// ECodeInvalidParameter naming the field.
func (in *AccessRequestInput) Validate() error {
	in.Description, in.ExpectedUse = strings.TrimSpace(in.Description), strings.TrimSpace(in.ExpectedUse)
	if in.API == "" {
		return ParamErrorf(ECodeMissingParameter, "api", "api is required")
	}
	if err := requiredText("description", in.Description, 4000); err != nil {
		return err
	}
	if err := requiredText("expectedUse", in.ExpectedUse, 2000); err != nil {
		return err
	}
	return ValidateRequestToken(in.RequestToken)
}

// A RequestToken is what a portal form carries so that sending it again (a double click, the back
// button, a client's retry after a lost answer) changes nothing: the first sending with a token
// is made, and every later one with the same token is refused with ECodeRepeated. A form's page
// draws a new one each time it is shown. It is 16 to 64 letters, digits, '-' or '_'.
const (
	MinRequestToken = 16
	MaxRequestToken = 64
)

// RequestTokenTTL is how long a used request token is remembered.
const RequestTokenTTL = 24 * time.Hour

// ValidateRequestToken checks a request token ("" is none); ECodeInvalidParameter naming
// requestToken.
func ValidateRequestToken(t string) error {
	if t == "" {
		return nil
	}
	if len(t) < MinRequestToken || len(t) > MaxRequestToken || strings.ContainsFunc(t, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}) {
		return ParamErrorf(ECodeInvalidParameter, "requestToken", "requestToken must be %d to %d letters, digits, '-' or '_'", MinRequestToken, MaxRequestToken)
	}
	return nil
}

// ValidateReply checks an operator's reply to an access request: required for a refusal (its
// reason), at most 4000 characters; ECodeMissingParameter or ECodeInvalidParameter naming reply.
func ValidateReply(reply string, required bool) error {
	if required {
		if reply == "" {
			return ParamErrorf(ECodeMissingParameter, "reply", "a refusal needs a reason for the developer")
		}
	}
	return optionalText("reply", reply, 4000)
}
