package flightgraph

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
)

// ReadJSON reads a request body that must be Content-Type application/json (ECodeBadMediaType),
// at most limit bytes (BodyError), and exactly one JSON object that decodes into v (ECodeBadBody,
// whose message starts with what, e.g. "the body must be one search"). Both edges read their
// bodies with it, so a body is bounded before any work and refused the same way everywhere.
func ReadJSON(w http.ResponseWriter, r *http.Request, limit int64, v any, what string) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return Errorf(ECodeBadMediaType, "the body must be Content-Type: application/json")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		return BodyError(err)
	}
	if err := DecodeOne(bytes.NewReader(body), v); err != nil {
		return Errorf(ECodeBadBody, "%s: %s", what, err)
	}
	return nil
}

// DecodeOne decodes exactly one JSON object from r into v, numbers kept exact (json.Number where
// v holds an interface); an array (a batch), anything after the object, or a value of the wrong
// type is an error whose text is short enough to show (it may quote the body).
func DecodeOne(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field == "" {
			return errors.New("an array is not one object: send one object")
		}
		return errors.New(clipAt(err.Error(), 120))
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("there is more after the JSON object")
	}
	return nil
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
