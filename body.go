package flightgraph

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzip"
)

// ReadJSON reads a request body that must be Content-Type application/json (ECodeBadMediaType),
// at most limit bytes (BodyError) once decoded (readBody), and exactly one JSON object that
// decodes into v (ECodeBadBody, whose message starts with what, e.g. "the body must be one
// search"). Both edges read their bodies with it, so a body is bounded before any work and
// refused the same way everywhere.
func ReadJSON(w http.ResponseWriter, r *http.Request, limit int64, v any, what string) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return Errorf(ECodeBadMediaType, "the body must be Content-Type: application/json")
	}
	body, err := readBody(w, r, limit)
	if err != nil {
		return err
	}
	if err := DecodeOne(bytes.NewReader(body), v); err != nil {
		var fe *Error
		if errors.As(err, &fe) { // a field of the wrong kind: its code and path stand
			fe.Message = what + ": " + fe.Message
			return fe
		}
		return Errorf(ECodeBadBody, "%s: %s", what, err)
	}
	return nil
}

// readBody reads r's body as sent, or gunzipped when its Content-Encoding is gzip (RFC 9110
// §8.4.1.3), and bounds both: at most limit bytes arrive and at most limit bytes are decoded, so
// a small body that inflates past the bound (a zip bomb) is refused (ECodeBodyTooLarge) having
// inflated no more than limit+1 bytes, and one that sends much to decode little (empty gzip
// members) is refused having read no more than limit+1. Any other coding is ECodeBadMediaType,
// the answer's Accept-Encoding naming the one taken (RFC 7694).
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	sent := http.MaxBytesReader(w, r.Body, limit)
	switch coding := strings.ToLower(strings.TrimSpace(strings.Join(r.Header.Values("Content-Encoding"), ","))); coding {
	case "", "identity":
		body, err := io.ReadAll(sent)
		if err != nil {
			return nil, BodyError(err)
		}
		return body, nil
	case "gzip", "x-gzip":
	default:
		w.Header().Set("Accept-Encoding", "gzip")
		return nil, Errorf(ECodeBadMediaType, "the body's Content-Encoding must be gzip or none, not %s", clipAt(strconv.Quote(coding), 40))
	}
	zr, err := gzip.NewReader(sent)
	if err == nil {
		var body []byte
		if body, err = io.ReadAll(http.MaxBytesReader(w, zr, limit)); err == nil {
			return body, nil
		}
	}
	var mbe *http.MaxBytesError
	var ne net.Error
	if errors.As(err, &mbe) || errors.As(err, &ne) && ne.Timeout() {
		return nil, BodyError(err)
	}
	return nil, Errorf(ECodeBadBody, "the body is not valid gzip (Content-Encoding: gzip): %s", clipAt(err.Error(), 80))
}

// DecodeOne decodes exactly one JSON object from r into v, numbers kept exact (json.Number where
// v holds an interface). A value of the wrong kind in a field is an *Error naming the field by
// its path in the body's own keys (origin, requestedConnections[0].origin.airport.code), which
// are the documented fields' names, and saying what it takes in JSON's words, never Go's:
// ECodeBadFormat ("origin must be an object, not a string"), or ECodeInvalidParameter for a
// whole number out of the field's range. An array (a batch), anything after the object, or a
// body that is not JSON is a plain error whose text is short enough to show (it may quote the
// body).
func DecodeOne(r io.Reader, v any) error {
	body, err := io.ReadAll(r)
	if err != nil {
		return errors.New(clipAt(err.Error(), 120))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			path := jsonPath(body, te.Offset)
			if path == "" {
				if te.Value == "array" {
					return errors.New("an array is not one object: send one object")
				}
				return fmt.Errorf("the body must be one JSON object, not %s", jsonGot(te.Value))
			}
			return fieldTypeError(path, te)
		}
		return errors.New(clipAt(err.Error(), 120))
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("there is more after the JSON object")
	}
	return nil
}

// fieldTypeError is the *Error of a value of the wrong kind at path: a whole number out of the
// field's range is invalid (ECodeInvalidParameter); anything else, a string for an object or a
// fraction for a count, has the wrong format (ECodeBadFormat).
func fieldTypeError(path string, te *json.UnmarshalTypeError) *Error {
	want := jsonKind(te.Type)
	if n, ok := strings.CutPrefix(te.Value, "number "); ok && want == "an integer" && strings.Trim(n, "-0123456789") == "" {
		return ParamErrorf(ECodeInvalidParameter, path, "%s is out of range: %s", path, clipAt(n, 40))
	}
	return ParamErrorf(ECodeBadFormat, path, "%s must be %s, not %s", path, want, jsonGot(te.Value))
}

// jsonKind says in JSON's words what a Go type takes: an object, a list, a string, an integer, a
// number, true or false.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	}
	return "a value"
}

// jsonGot says in JSON's words what a client sent, from encoding/json's Value ("string",
// "number 1.5", "object", "array", "bool").
func jsonGot(value string) string {
	switch {
	case value == "object":
		return "an object"
	case value == "array":
		return "a list"
	case value == "string":
		return "a string"
	case value == "bool":
		return "true or false"
	case strings.HasPrefix(value, "number"):
		if n, ok := strings.CutPrefix(value, "number "); ok {
			return "the number " + clipAt(n, 40)
		}
		return "a number"
	}
	return "a " + clipAt(value, 20)
}

// jsonPath is the path, in body's own keys, of the value encoding/json was decoding when it
// stopped at offset (a literal ends there, an object or a list opens there): origin,
// destinations[0], requestedConnections[1].origin.airport. The root is "". The body decoded up
// to offset, so its tokens read without error that far.
func jsonPath(body []byte, offset int64) string {
	type frame struct {
		object  bool
		key     string
		index   int
		wantKey bool
	}
	var stack []frame
	path := func() string {
		var b strings.Builder
		for _, f := range stack {
			if f.object {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(f.key)
			} else {
				fmt.Fprintf(&b, "[%d]", f.index)
			}
		}
		return b.String()
	}
	// next moves the innermost object or list past the value just read.
	next := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].object {
				stack[n-1].wantKey = true
			} else {
				stack[n-1].index++
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return path()
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if dec.InputOffset() >= offset {
				return path()
			}
			stack = append(stack, frame{object: tok == json.Delim('{'), wantKey: true})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			next()
		default:
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
				stack[n-1].key, _ = tok.(string)
				stack[n-1].wantKey = false
				continue
			}
			if dec.InputOffset() >= offset {
				return path()
			}
			next()
		}
	}
}

// ETag is the strong entity tag of an answer's bytes, quoted: the first 128 bits of their SHA-256.
// Answers that never change for a caller's audience (the OpenAPI document, introspection) carry
// it, so that a client holding one asks with If-None-Match and gets 304 without the bytes.
func ETag(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`
}

// NotModified reports whether a request's If-None-Match names etag, or is "*": its answer is then
// 304 with no body (RFC 9110 §13.1.2, which compares weakly: W/"x" matches "x").
func NotModified(h http.Header, etag string) bool {
	want := strings.TrimPrefix(etag, "W/")
	for _, line := range h.Values("If-None-Match") {
		for tag := range strings.SplitSeq(line, ",") {
			tag = strings.TrimSpace(tag)
			if tag == "*" || strings.TrimPrefix(tag, "W/") == want {
				return true
			}
		}
	}
	return false
}
