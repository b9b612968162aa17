package flightgraph

import (
	"net/url"
	"strings"
	"time"
)

// Application is a developer's registered application; its keys call the APIs.
type Application struct {
	ID          string    `db:"id"`
	AccountID   string    `db:"account_id"`
	Name        string    `db:"name"`
	Website     string    `db:"website"`
	Description string    `db:"description"`
	CallbackURL string    `db:"callback_url"`
	CreatedAt   time.Time `db:"created_at"`
	UpdatedAt   time.Time `db:"updated_at"`
}

// ApplicationInput is what a developer gives to register or edit an application.
type ApplicationInput struct {
	Name        string
	Website     string // optional, http(s)
	Description string
	CallbackURL string // optional, https (http only for localhost), used by OAuth flows
	// RequestToken, when given, registers the application once however often the form is sent
	// (RequestToken); registering only.
	RequestToken string
}

// Validate checks and normalises the input; it returns ECodeMissingParameter,
// ECodeInvalidParameter or ECodeBadFormat naming the field.
func (in *ApplicationInput) Validate() error {
	in.Name = strings.TrimSpace(in.Name)
	in.Website = strings.TrimSpace(in.Website)
	in.Description = strings.TrimSpace(in.Description)
	in.CallbackURL = strings.TrimSpace(in.CallbackURL)
	if err := requiredText("name", in.Name, 100); err != nil {
		return err
	}
	if err := requiredText("description", in.Description, 2000); err != nil {
		return err
	}
	if in.Website != "" {
		if err := checkURL("website", in.Website, false); err != nil {
			return err
		}
	}
	if in.CallbackURL != "" {
		if err := checkURL("callbackUrl", in.CallbackURL, true); err != nil {
			return err
		}
	}
	return nil
}

// checkURL accepts absolute http(s) URLs; a callback must be https unless it points at the
// developer's own machine, and may not carry a fragment (RFC 6749 §3.1.2).
func checkURL(field, raw string, callback bool) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || len(raw) > 2000 {
		return ParamErrorf(ECodeBadFormat, field, "%s must be an absolute http or https URL, got %q", field, raw)
	}
	if callback {
		local := u.Hostname() == "localhost" || u.Hostname() == "127.0.0.1" || u.Hostname() == "::1"
		if u.Scheme != "https" && !local {
			return ParamErrorf(ECodeInvalidParameter, field, "%s must use https (http is allowed for localhost only)", field)
		}
		if u.Fragment != "" {
			return ParamErrorf(ECodeInvalidParameter, field, "%s must not have a fragment", field)
		}
	}
	return nil
}
