package flightgraph

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
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
