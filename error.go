// Package flightgraph holds the domain of the flight data platform: the nouns (flights, airports,
// aircraft, amenities, …), the interfaces the rest of the code talks through, and the one error
// type with its code catalogue. Subpackages implement the interfaces (store), hold the logic
// (travel, access) or serve the edges (graph, resolvers, rest, server).
package flightgraph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"time"
)

// Error codes. The INSP_, DEST_, ORI_, FLIGHT_, CC_, IATA_, CONTENT_ and WS_ codes are the original
// service's (spec §7); the others are flightgraph's own, in the same style.
const (
	ECodeMissingParameter = "INSP_400.000" // a mandatory input parameter is missing
	ECodeInvalidParameter = "INSP_400.001" // an input parameter is invalid
	ECodeBadFormat        = "INSP_400.002" // an input parameter has an invalid format
	ECodeUnknownPath      = "INSP_404.000" // the requested URL does not exist
	ECodeNotAcceptable    = "INSP_406.000" // the requested media type is not provided

	ECodeInconsistentInput  = "DEST_400.000" // dependent inputs are inconsistent
	ECodeDestinationUnknown = "DEST_404.000"
	ECodeOriginUnknown      = "ORI_404.000"
	ECodeTripDestination    = "DEST_404.001"

	ECodeFlightNotFound       = "FLIGHT_404.001" // flight number and date not found
	ECodeFlightConfiguration  = "FLIGHT_404.002" // flight configuration not found
	ECodeCabinClassNotFound   = "CC_404.000"
	ECodeCabinClassNotOnBoard = "CC_404.001"
	ECodeCabinClassUnknown    = "CC_404.002"
	ECodeIATANotFound         = "IATA_404.000" // city or airport code not found
	ECodeNoCabinContent       = "CONTENT_404.001"
	ECodeNoCategoryContent    = "CONTENT_404.002"

	ECodeOfferInvalid = "OFFER_400.000" // the offer id is malformed, altered or not this service's
	ECodeOfferExpired = "OFFER_410.000" // the offer is past its validity or no longer sold

	ECodeMissingCredentials = "AUTH_401.000" // no api-key and no bearer token
	ECodeInvalidKey         = "AUTH_401.001" // the api-key is malformed, unknown or revoked
	ECodeInvalidToken       = "AUTH_401.002" // the access token is malformed, unknown, expired or revoked
	ECodeNotApproved        = "AUTH_403.000" // the key has no approved subscription to this API
	ECodeWrongCredential    = "AUTH_403.001" // this API takes another kind of credential or grant
	ECodePerSecondLimit     = "LIMIT_429.000"
	ECodePerDayLimit        = "LIMIT_429.001"
	ECodeHeavyTurn          = "LIMIT_429.002" // the key's heavy work runs already: one at a time, not charged (see its entry)
	ECodeTooManyMails       = "OFFER_429.000" // mail-my-search: the mailbox, the key or the client had its mails for now
	ECodeMailBusy           = "MAIL_429.000"  // the replica sends as much mail as it may this minute: try again later

	ECodeNotSignedIn    = "PORTAL_401.000" // no or an expired portal session
	ECodeBadLogin       = "PORTAL_401.001" // wrong e-mail or password
	ECodeOperatorsOnly  = "PORTAL_403.000"
	ECodeNotFound       = "PORTAL_404.000" // no such application, key, subscription or request of yours
	ECodeConflict       = "PORTAL_409.000" // e.g. the e-mail has an account already
	ECodeInvalidState   = "PORTAL_409.001" // the workflow does not allow this change now
	ECodeRepeated       = "PORTAL_409.002" // the same request was made a moment ago: it is made once
	ECodeTooManySignIns = "PORTAL_429.000" // the e-mail's failed sign-ins are over the limit: locked for a while

	ECodeQueryCost       = "QUERY_400.000" // the operation costs more than the plan allows
	ECodeQueryDepth      = "QUERY_400.001" // the operation nests deeper than the plan allows
	ECodeQueryAliases    = "QUERY_400.002" // the operation has more aliases than the plan allows
	ECodeQueryRootFields = "QUERY_400.003" // the operation has more root fields than the plan allows
	ECodeQueryTokens     = "QUERY_400.004" // the document has more tokens or fields than allowed
	ECodeQueryRepeats    = "QUERY_400.005" // the document repeats one field too often

	ECodeBadBody          = "REQ_400.000" // the request body is not one well-formed request
	ECodeMethodNotAllowed = "REQ_405.000" // the method is not allowed here, e.g. a mutation over GET, a POST on a GET path
	ECodeBodyTimeout      = "REQ_408.000" // the request body did not arrive in time
	ECodeBodyTooLarge     = "REQ_413.000" // the request body is too large
	ECodeCrossSite        = "REQ_403.000" // a portal page's form was sent from another site; a page of an origin not allowed opened a WebSocket
	ECodeBadMediaType     = "REQ_415.000" // the request body's media type is not one the endpoint takes

	ECodePositionExpired     = "STREAM_410.000" // the position resumed from is older than the retention: start over
	ECodeResume              = "STREAM_409.000" // the subscription fell behind its buffer: resume from the last position seen
	ECodeTooManyStreams      = "STREAM_429.000" // the key or the client address has as many open subscriptions as it may
	ECodeSubscriptionRevoked = "STREAM_403.000" // the credential no longer opens this subscription (revoked, expired, demoted)

	ECodeInternal = "INSP_500.000" // unexpected internal failure, masked
	ECodeTimeout  = "WS_504.000"   // the request ran out of time: nothing more of it ran
	ECodeShed     = "WS_503.000"   // the replica is at capacity for this kind of work: not charged (see its entry)
	ECodeDatabase = "WS_502.000"   // the database failed
	ECodeCache    = "WS_502.001"   // the shared limiter store (Redis) failed
	ECodeMail     = "WS_502.002"   // the mail server failed
)

// CatalogueEntry describes one error code: its HTTP status, its short name and what it means.
type CatalogueEntry struct {
	Code    string
	Status  int
	Name    string
	Meaning string
}

var catalogue = map[string]CatalogueEntry{}

func entry(code string, status int, name, meaning string) {
	catalogue[code] = CatalogueEntry{Code: code, Status: status, Name: name, Meaning: meaning}
}

func init() {
	entry(ECodeMissingParameter, http.StatusBadRequest, "MISSING_PARAMETER", "A mandatory input parameter is missing.")
	entry(ECodeInvalidParameter, http.StatusBadRequest, "INVALID_PARAMETER", "An input parameter is invalid.")
	entry(ECodeBadFormat, http.StatusBadRequest, "INVALID_FORMAT", "An input parameter has an invalid format.")
	entry(ECodeUnknownPath, http.StatusNotFound, "UNKNOWN_PATH", "The requested URL does not exist.")
	entry(ECodeNotAcceptable, http.StatusNotAcceptable, "NOT_ACCEPTABLE", "The requested media type is not one the API provides.")
	entry(ECodeInconsistentInput, http.StatusBadRequest, "INCONSISTENT_INPUT", "Dependent inputs are inconsistent: price is given without origin.")
	entry(ECodeDestinationUnknown, http.StatusNotFound, "DESTINATION_NOT_FOUND", "Destination not found.")
	entry(ECodeOriginUnknown, http.StatusNotFound, "ORIGIN_NOT_FOUND", "Origin not found.")
	entry(ECodeTripDestination, http.StatusNotFound, "TRIP_DESTINATION_NOT_FOUND", "Destination not found by the trip planner.")
	entry(ECodeFlightNotFound, http.StatusNotFound, "FLIGHT_NOT_FOUND", "The flight number and date are not found.")
	entry(ECodeFlightConfiguration, http.StatusNotFound, "FLIGHT_CONFIGURATION_NOT_FOUND", "The flight's aircraft configuration is not found.")
	entry(ECodeCabinClassNotFound, http.StatusNotFound, "CABIN_CLASS_NOT_FOUND", "The cabin class is not found.")
	entry(ECodeCabinClassNotOnBoard, http.StatusNotFound, "CABIN_CLASS_NOT_AVAILABLE", "The cabin class is not available for the given aircraft.")
	entry(ECodeCabinClassUnknown, http.StatusNotFound, "CABIN_CLASSES_UNDETERMINED", "The cabin classes available for the flight cannot be determined.")
	entry(ECodeIATANotFound, http.StatusNotFound, "IATA_CODE_NOT_FOUND", "The city or airport IATA code is not found.")
	entry(ECodeNoCabinContent, http.StatusNotFound, "NO_CABIN_CONTENT", "No matching rich content for a cabin class available on this flight.")
	entry(ECodeNoCategoryContent, http.StatusNotFound, "NO_CATEGORY_CONTENT", "No matching rich content for the given category.")
	entry(ECodeOfferInvalid, http.StatusBadRequest, "INVALID_OFFER", "The offer id is malformed, altered or not this service's.")
	entry(ECodeOfferExpired, http.StatusGone, "OFFER_EXPIRED", "The offer is past its validity or no longer sold: search again.")
	entry(ECodeMissingCredentials, http.StatusUnauthorized, "MISSING_CREDENTIALS", "The call carries neither an api-key header nor a bearer token.")
	entry(ECodeInvalidKey, http.StatusUnauthorized, "INVALID_KEY", "The api-key is malformed, unknown or revoked.")
	entry(ECodeInvalidToken, http.StatusUnauthorized, "INVALID_TOKEN", "The access token is malformed, unknown, expired or revoked.")
	entry(ECodeNotApproved, http.StatusForbidden, "ACCOUNT_INACTIVE", "The key has no approved subscription to this API.")
	entry(ECodeWrongCredential, http.StatusForbidden, "WRONG_CREDENTIAL", "This API takes another kind of credential or grant.")
	entry(ECodePerSecondLimit, http.StatusTooManyRequests, "OVER_QPS_LIMIT", "Account over queries per second limit.")
	entry(ECodePerDayLimit, http.StatusTooManyRequests, "OVER_RATE_LIMIT", "Account over daily rate limit.")
	entry(ECodeHeavyTurn, http.StatusTooManyRequests, "HEAVY_WORK_RUNNING", "The key's heavy search is still running (one at a time); retry after Retry-After. Not charged, but for a call admitted for a kept answer that went before it was served (its message says so).")
	entry(ECodeTooManyMails, http.StatusTooManyRequests, "TOO_MANY_MAILS", "This address, this key or this client was mailed as many searches as it gets for now.")
	entry(ECodeMailBusy, http.StatusTooManyRequests, "MAIL_BUSY", "The service is sending as much mail as it may for now; try again later.")
	entry(ECodeNotSignedIn, http.StatusUnauthorized, "NOT_SIGNED_IN", "Sign in to the portal first.")
	entry(ECodeBadLogin, http.StatusUnauthorized, "BAD_LOGIN", "Wrong e-mail or password.")
	entry(ECodeOperatorsOnly, http.StatusForbidden, "OPERATORS_ONLY", "Only operators may do this.")
	entry(ECodeNotFound, http.StatusNotFound, "NOT_FOUND", "No such application, key, subscription or request of yours.")
	entry(ECodeConflict, http.StatusConflict, "CONFLICT", "It exists already.")
	entry(ECodeInvalidState, http.StatusConflict, "INVALID_STATE", "The workflow does not allow this change now.")
	entry(ECodeRepeated, http.StatusConflict, "REPEATED", "The same request was made a moment ago; it is made once.")
	entry(ECodeQueryCost, http.StatusBadRequest, "QUERY_TOO_COSTLY", "The operation costs more than the plan allows.")
	entry(ECodeQueryDepth, http.StatusBadRequest, "QUERY_TOO_DEEP", "The operation nests deeper than the plan allows.")
	entry(ECodeQueryAliases, http.StatusBadRequest, "QUERY_TOO_MANY_ALIASES", "The operation has more aliases than the plan allows.")
	entry(ECodeQueryRootFields, http.StatusBadRequest, "QUERY_TOO_MANY_ROOT_FIELDS", "The operation has more root fields than the plan allows, or more than one inspiration or deals search.")
	entry(ECodeQueryTokens, http.StatusBadRequest, "QUERY_TOO_LARGE", "The document has more tokens or fields than allowed.")
	entry(ECodeQueryRepeats, http.StatusBadRequest, "QUERY_REPEATS_FIELD", "The document repeats one field more often than allowed.")
	entry(ECodeBadBody, http.StatusBadRequest, "MALFORMED_BODY", "The request body is not one well-formed request.")
	entry(ECodeMethodNotAllowed, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "The method is not allowed here: the Allow header names those that are (a GraphQL mutation takes POST).")
	entry(ECodeBodyTimeout, http.StatusRequestTimeout, "BODY_TIMEOUT", "The request body did not arrive in time.")
	entry(ECodeBodyTooLarge, http.StatusRequestEntityTooLarge, "BODY_TOO_LARGE", "The request body is too large.")
	entry(ECodeCrossSite, http.StatusForbidden, "CROSS_SITE", "A portal form was sent from another site, or a page of an origin not allowed to call the APIs opened a WebSocket; send it from the portal's own page, or from an allowed origin.")
	entry(ECodeBadMediaType, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "The request body's media type is not one the endpoint takes.")
	entry(ECodeTooManySignIns, http.StatusTooManyRequests, "TOO_MANY_SIGN_INS", "Too many failed sign-ins; try again later.")
	entry(ECodePositionExpired, http.StatusGone, "POSITION_EXPIRED", "The position resumed from is older than the events kept (see the retention): subscribe again without one.")
	entry(ECodeResume, http.StatusConflict, "RESUME", "The subscription fell behind its buffer and was ended: subscribe again from the last position received.")
	entry(ECodeTooManyStreams, http.StatusTooManyRequests, "TOO_MANY_SUBSCRIPTIONS", "The key or the client address has as many open subscriptions as its plan allows; close one first.")
	entry(ECodeSubscriptionRevoked, http.StatusForbidden, "SUBSCRIPTION_REVOKED", "The credential no longer opens this subscription: it was revoked, expired or its account demoted.")
	for i := 0; i <= 8; i++ {
		code := fmt.Sprintf("INSP_500.%03d", i)
		entry(code, http.StatusInternalServerError, "INTERNAL_ERROR", "An unexpected technical error occurred; quote the request id.")
	}
	entry(ECodeTimeout, http.StatusGatewayTimeout, "TIMEOUT", "The request ran out of time; nothing more of it ran.")
	entry(ECodeShed, http.StatusServiceUnavailable, "AT_CAPACITY", "The replica is at capacity for this kind of work; retry after Retry-After. Not charged, but for a call admitted for a kept answer that went before it was served (its message says so).")
	entry(ECodeDatabase, http.StatusBadGateway, "DATABASE_UNAVAILABLE", "The database did not answer.")
	entry(ECodeCache, http.StatusBadGateway, "LIMITER_UNAVAILABLE", "The shared limiter store did not answer.")
	entry(ECodeMail, http.StatusBadGateway, "MAIL_UNAVAILABLE", "The mail server did not answer.")
}

// Catalogue returns every error code the service can answer with, sorted by code.
func Catalogue() []CatalogueEntry {
	out := make([]CatalogueEntry, 0, len(catalogue))
	for _, e := range catalogue {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}

// Lookup returns the catalogue entry of code; an unknown code is reported as an internal error.
func Lookup(code string) CatalogueEntry {
	if e, ok := catalogue[code]; ok {
		return e
	}
	return catalogue[ECodeInternal]
}

// Error is the one error type that crosses the edges. Code is a catalogue code; Message is safe
// to show to the caller; Parameter names the offending input, if any; RetryAfter, when positive,
// is how long the caller should wait before trying again, which the edges send as Retry-After.
type Error struct {
	Code       string
	Message    string
	Parameter  string
	RetryAfter time.Duration
	Err        error // the cause, for logs only: never shown to a caller
}

// RetryAfterSeconds is RetryAfter in whole seconds as Retry-After states it, rounded up so that a
// caller who waits that long is not refused again; 0 when there is nothing to wait for.
func (e *Error) RetryAfterSeconds() int { return Seconds(e.RetryAfter) }

// Seconds is d in whole seconds, rounded up, as Retry-After and the rate-limit headers state a
// wait: whoever waits that long is not refused again. It is 0 when d is not positive.
func Seconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int((d + time.Second - 1) / time.Second)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	if e.Parameter != "" {
		return fmt.Sprintf("%s: %s (%s)", e.Code, e.Message, e.Parameter)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// UnknownPath is the answer for a path that does not exist, and, byte for byte, for an API the
// caller may not see: a different word would tell them the hidden API is there.
func UnknownPath() *Error { return Errorf(ECodeUnknownPath, "The requested URL does not exist.") }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ParamErrorf is Errorf for an error about one named input parameter.
func ParamErrorf(code, parameter, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Parameter: parameter}
}

// MaxMessage bounds the message a client is told (Public): whatever input a message quotes, an
// error is never an echo of a request's megabytes. Messages that quote input clip it too (Clip),
// to keep their sense; this is the line behind them.
const MaxMessage = 512

// Public is what a client is told of err: the one masking rule of every edge (REST, GraphQL, the
// token endpoint). The *Error in err's chain is told as it is, its code, message (at most
// MaxMessage bytes), parameter and wait, never its cause (Err); work stopped because ctx is done (the client went away, the time
// ran out) is ECodeTimeout; anything else is ECodeInternal, quoting only the request id.
//
// It also logs what the log must hold, with the request id and attrs: an unexpected error at
// ERROR, a failure of a backing service (an *Error of status 5xx with a cause) at WARN, and
// nothing for work stopped by its context, which is nobody's failure, nor for the caller's
// mistakes. log may be nil. The code told is noted in the request's Record, if it has one.
func Public(ctx context.Context, log *slog.Logger, err error, attrs ...any) *Error {
	fe := public(ctx, log, err, attrs...)
	if fe != nil {
		RecordFromContext(ctx).NoteError(fe.Code)
	}
	return fe
}

func public(ctx context.Context, log *slog.Logger, err error, attrs ...any) *Error {
	if err == nil {
		return nil
	}
	done := ctx.Err() != nil
	if done && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return &Error{Code: ECodeTimeout, Message: "the request ran out of time"}
		}
		return &Error{Code: ECodeTimeout, Message: "the request was cancelled"}
	}
	rid := RequestIDFromContext(ctx)
	var fe *Error
	if errors.As(err, &fe) {
		if fe.Err != nil && !done && log != nil && Lookup(fe.Code).Status >= http.StatusInternalServerError {
			log.WarnContext(ctx, "backing service failed", append([]any{"requestId", rid, "code", fe.Code, "err", fe.Err}, attrs...)...)
		}
		return &Error{Code: fe.Code, Message: clipAt(fe.Message, MaxMessage), Parameter: fe.Parameter, RetryAfter: fe.RetryAfter}
	}
	if !done && log != nil {
		log.ErrorContext(ctx, "internal error", append([]any{"requestId", rid, "err", err}, attrs...)...)
	}
	return &Error{Code: ECodeInternal, Message: "Internal error; quote request id " + rid + "."}
}

// ErrExists is a store's answer to a write of something that exists already (a unique key
// violated). It speaks for no edge: the service that expects it says what exists, in its own
// words and code (the portal: ECodeConflict); anywhere else it is a defect, masked as an internal
// error.
var ErrExists = errors.New("it exists already")

// ErrorCode returns the code of the *Error in err's chain, or ECodeInternal for any other error
// and "" for nil.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return ECodeInternal
}

// ErrorMessage returns the caller-safe message of err: the *Error's message, or a generic text
// for any other error, which must never reach a client.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error."
}

// BodyError is the error of a request body that could not be read: too large for the reader
// http.MaxBytesReader put on it (ECodeBodyTooLarge), too slow to arrive before the server's read
// deadline (ECodeBodyTimeout), or cut off (ECodeBadBody). Each is the client's fault, none the
// server's.
func BodyError(err error) *Error {
	var mbe *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.As(err, &mbe):
		return Errorf(ECodeBodyTooLarge, "the body exceeds %d bytes", mbe.Limit)
	case errors.As(err, &ne) && ne.Timeout():
		return Errorf(ECodeBodyTimeout, "the body did not arrive in time")
	}
	return Errorf(ECodeBadBody, "the body could not be read: the client stopped sending it")
}
