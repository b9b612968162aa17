package server

import (
	"net/http"
	"strings"

	"github.com/klauspost/compress/gzhttp"
	"github.com/klauspost/compress/gzip"
)

// CompressMinSize is the smallest answer that is compressed: below about a packet, compressing
// saves nothing on the wire and costs time at both ends.
const CompressMinSize = 1 << 10

// etagSuffixes are what gzhttp appends to the ETag of an answer it compresses (SuffixETag), one
// per coding: a compressed answer is another representation, so its strong ETag must differ
// from the identity one's (RFC 9110 §8.8.3).
var etagSuffixes = []string{"-gzip", "-zstd"}

// compress compresses the answers of the API edges (/graphql, the REST paths, /openapi.json, the
// playground and the static assets) of CompressMinSize bytes or more, with gzip or zstd as the
// client's Accept-Encoding prefers (zstd when both are equally welcome), and adds Vary:
// Accept-Encoding to them. An answer streams as it is written: a Flush sends what is compressed
// so far. HEAD is answered uncompressed (gzhttp's choice, for proxies that mishandle it).
//
// The portal's pages, /portal/graphql and the token endpoint are never compressed: they answer
// with secrets (a key's secret, a token, a form's anti-forgery state) beside what the request
// sent, and a browser sends their cookie on another site's behalf, which is what a BREACH
// attack needs to read a secret from the compressed sizes. The API edges take credentials in
// headers only, which no other site can make a browser send, and their answers carry none.
//
// A compressed answer's ETag carries the coding's suffix ("x-gzip"); a request whose
// If-None-Match names such a tag is matched by the handlers on the tag without it, and its 304
// repeats the tag the client holds.
func compress(next http.Handler) http.Handler {
	wrap, err := gzhttp.NewWrapper(
		gzhttp.MinSize(CompressMinSize),
		// The fastest level: a 50-flight board (125 KB) is 9.6 KB, against 7.3 KB at the
		// default level, whose time on loopback was 7-10% of the exchange's, BestSpeed's 1-7%
		// (BenchmarkCompression). zstd's fastest level (gzhttp's default) is 6.2 KB for as little.
		gzhttp.CompressionLevel(gzip.BestSpeed),
		gzhttp.SuffixETag(etagSuffixes[0]),
		// Requests are decoded where bodies are read and bounded (flightgraph.ReadJSON), so
		// that the bound applies to the decoded bytes.
		gzhttp.AllowCompressedRequests(false),
	)
	if err != nil {
		panic(err) // the options above are constant
	}
	compressed := wrap(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p == "/portal" || strings.HasPrefix(p, "/portal/") || strings.HasPrefix(p, "/oauthcust/") {
			next.ServeHTTP(w, r)
			return
		}
		if held := r.Header.Values("If-None-Match"); len(held) > 0 {
			if identity, changed := stripETagSuffixes(held); changed {
				r.Header["If-None-Match"] = identity
				w = &notModifiedTag{ResponseWriter: w, held: held}
			}
		}
		compressed.ServeHTTP(w, r)
	})
}

// stripETagSuffixes returns the If-None-Match lines with each tag's coding suffix removed, and
// whether any had one.
func stripETagSuffixes(lines []string) ([]string, bool) {
	out, changed := make([]string, len(lines)), false
	for i, line := range lines {
		tags := strings.Split(line, ",")
		for j, tag := range tags {
			tag = strings.TrimSpace(tag)
			for _, suffix := range etagSuffixes {
				if base, ok := strings.CutSuffix(tag, suffix+`"`); ok {
					tag, changed = base+`"`, true
					break
				}
			}
			tags[j] = tag
		}
		out[i] = strings.Join(tags, ", ")
	}
	return out, changed
}

// notModifiedTag gives a 304 the tag the client named: the handler's ETag is the identity
// one, and the client may hold the compressed representation, whose tag has a suffix.
type notModifiedTag struct {
	http.ResponseWriter
	held []string // the request's If-None-Match lines as sent
}

func (w *notModifiedTag) WriteHeader(code int) {
	if tag := w.Header().Get("ETag"); code == http.StatusNotModified && strings.HasSuffix(tag, `"`) {
		for _, suffix := range etagSuffixes {
			coded := strings.TrimSuffix(tag, `"`) + suffix + `"`
			if namesTag(w.held, coded) {
				w.Header().Set("ETag", coded)
				break
			}
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

// Flush keeps the wrapped writer's streaming: handlers flush with a type assertion too.
func (w *notModifiedTag) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

func (w *notModifiedTag) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// namesTag reports whether the If-None-Match lines name tag exactly (a weak W/ prefix aside).
func namesTag(lines []string, tag string) bool {
	for _, line := range lines {
		for t := range strings.SplitSeq(line, ",") {
			if strings.TrimPrefix(strings.TrimSpace(t), "W/") == tag {
				return true
			}
		}
	}
	return false
}
