// Package tracing traces flightgraph with OpenTelemetry: a server span for each request of the
// API's listener, named by its operation, with child spans for the SQL statements and the search
// engines' work it does, exported over OTLP/HTTP. The W3C trace context (traceparent, tracestate)
// of an incoming request is honoured: its span is the caller's span's child.
//
// It is the one package that knows OpenTelemetry. The rest of the code offers hooks that are nil
// when nothing traces (server.Config.Trace, store.DB.OnStatement, travel.Service.Trace) and
// notes what the edges know in the request's flightgraph.Record; cmd/flightgraph wires them to a
// Tracer only when an OTLP endpoint is configured. Without one nothing is set up at all: no
// middleware, no spans, no context values.
//
// A span's attributes hold identifiers and codes, never a credential, a request's body or query
// string, nor a statement's values (see Tracer.Handler).
package tracing

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/flightgraph/flightgraph"
)

// The environment variables of the OpenTelemetry SDK that decide whether flightgraph traces (the
// SDK reads the others itself: headers, timeouts, compression, sampler, batching).
const (
	EnvEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	EnvTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	EnvTracesExporter = "OTEL_TRACES_EXPORTER"
	EnvSDKDisabled    = "OTEL_SDK_DISABLED"
)

// Config says where spans go.
type Config struct {
	// Endpoint is the base URL of an OTLP/HTTP receiver (a collector: http://localhost:4318), as
	// OTEL_EXPORTER_OTLP_ENDPOINT would give it: spans are posted to Endpoint/v1/traces. Empty,
	// the exporter reads the standard variables (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, then
	// OTEL_EXPORTER_OTLP_ENDPOINT).
	Endpoint string
	// Version is the service.version of the spans' resource.
	Version string
	// Exporter, when set, takes the spans instead of an OTLP exporter (tests).
	Exporter sdktrace.SpanExporter
}

// Wanted reports whether tracing is asked for: an endpoint given (Config.Endpoint) or in the
// standard variables, and neither OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none. It
// refuses what flightgraph cannot honour: another exporter than OTLP, or OTLP over gRPC.
func Wanted(endpoint string, getenv func(string) string) (bool, error) {
	if strings.EqualFold(strings.TrimSpace(getenv(EnvSDKDisabled)), "true") {
		return false, nil
	}
	switch e := strings.TrimSpace(getenv(EnvTracesExporter)); e {
	case "none":
		return false, nil
	case "", "otlp":
	default:
		return false, fmt.Errorf("%s=%s: flightgraph exports traces over OTLP only (otlp, or none for no traces)", EnvTracesExporter, e)
	}
	if endpoint == "" && getenv(EnvTracesEndpoint) == "" && getenv(EnvEndpoint) == "" {
		return false, nil
	}
	for _, name := range []string{EnvTracesProtocol, EnvProtocol} {
		if p := getenv(name); p != "" && p != "http/protobuf" && p != "http/json" {
			return false, fmt.Errorf("%s=%s: flightgraph exports OTLP over HTTP: set it to http/protobuf, or leave it unset", name, p)
		}
	}
	return true, nil
}

// TracesURL returns where spans of a receiver at base (Config.Endpoint) are posted: its
// /v1/traces. It refuses anything but an http:// or https:// URL with a host.
func TracesURL(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.RawQuery != "" || u.Fragment != "" {
		// The URL is not quoted: it may carry a password.
		return "", errors.New("want the http:// or https:// base URL of an OTLP/HTTP receiver, with no query, e.g. http://localhost:4318")
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	u.User = nil
	return u.String(), nil
}

// Tracer makes flightgraph's spans and exports them.
type Tracer struct {
	provider   *sdktrace.TracerProvider
	tracer     trace.Tracer
	propagator propagation.TraceContext
}

// New returns a Tracer that exports its spans over OTLP/HTTP, in batches, from the background:
// a request never waits for an export, and spans that a slow or absent receiver cannot take are
// dropped (the SDK's queue is bounded). Sampling follows the caller's decision (traceparent's
// sampled flag) and otherwise samples everything, unless OTEL_TRACES_SAMPLER says otherwise.
// Call Shutdown to send what is left.
func New(ctx context.Context, cfg Config) (*Tracer, error) {
	exp := cfg.Exporter
	if exp == nil {
		var opts []otlptracehttp.Option
		if cfg.Endpoint != "" {
			u, err := TracesURL(cfg.Endpoint)
			if err != nil {
				return nil, err
			}
			opts = append(opts, otlptracehttp.WithEndpointURL(u))
		}
		var err error
		if exp, err = otlptracehttp.New(ctx, opts...); err != nil {
			return nil, fmt.Errorf("tracing: the OTLP exporter: %w", err)
		}
	}
	// The standard variables (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) win over the defaults.
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName("flightgraph"), semconv.ServiceVersion(cfg.Version)))
	if err == nil {
		res, err = resource.Merge(res, resource.Environment())
	}
	if err != nil {
		return nil, fmt.Errorf("tracing: the resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Tracer{provider: tp, tracer: tp.Tracer("github.com/flightgraph/flightgraph")}, nil
}

// ForceFlush exports the spans ended so far.
func (t *Tracer) ForceFlush(ctx context.Context) error { return t.provider.ForceFlush(ctx) }

// Shutdown exports the spans ended so far and stops: spans started later are not recorded.
func (t *Tracer) Shutdown(ctx context.Context) error { return t.provider.Shutdown(ctx) }

// Attribute keys of flightgraph's own (the others are OpenTelemetry's semantic conventions).
const (
	AttrRequestID     = attribute.Key("flightgraph.request.id")
	AttrCallerKind    = attribute.Key("flightgraph.caller.kind")
	AttrKeyID         = attribute.Key("flightgraph.key.id")
	AttrApplicationID = attribute.Key("flightgraph.application.id")
	AttrAccountID     = attribute.Key("flightgraph.account.id")
	AttrAPIs          = attribute.Key("flightgraph.apis")
	AttrCalls         = attribute.Key("flightgraph.calls")
	AttrErrorCodes    = attribute.Key("flightgraph.error.codes")
	AttrWork          = attribute.Key("flightgraph.work")
)

// maxName bounds an operation name that a client chose.
const maxName = 128

// Handler wraps the API's handler: each request gets a server span, the child of the caller's
// (traceparent, tracestate), whose context every span of its work descends from. Once answered,
// the span is named by its operation: on a GraphQL endpoint (a route ending in /graphql), the
// operation's type and name ("query Departures"), else the method and route pattern
// ("GET /opendata/flightstatus/{id}"), else the method. It
// holds the method, route and status code; the request id; the caller's kind, key id,
// application id and account id (identifiers, never the credential); the APIs charged and the
// calls; the GraphQL operation; and the error codes answered (error.type, the first). A 5xx
// answer sets the span's status to Error. Neither the path, the query string, the headers nor
// the body are recorded: they can hold what a client must not see in a trace.
//
// A request whose span is not recorded (the caller's traceparent says not sampled, or the
// sampler said no) goes on with that span in its context and nothing else: no record, no
// attributes, and none of its work is traced.
func (t *Tracer) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := t.propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := t.tracer.Start(ctx, methodOf(r.Method), trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		if !span.IsRecording() {
			next.ServeHTTP(w, r.WithContext(ctx))
			return
		}
		rec := &flightgraph.Record{}
		sw := &statusWriter{ResponseWriter: w}
		r = r.WithContext(flightgraph.WithRecord(ctx, rec))
		next.ServeHTTP(sw, r)
		finish(span, r, sw.status, rec)
	})
}

// finish names the span of an answered request and sets its attributes.
func finish(span trace.Span, r *http.Request, status int, rec *flightgraph.Record) {
	if status == 0 {
		status = http.StatusOK
	}
	method := methodOf(r.Method)
	attrs := make([]attribute.KeyValue, 0, 16)
	attrs = append(attrs, semconv.HTTPRequestMethodKey.String(method), semconv.HTTPResponseStatusCode(status),
		AttrRequestID.String(flightgraph.RequestIDFromContext(r.Context())))
	name := method
	route := routeOf(r.Pattern)
	if route != "" {
		attrs = append(attrs, semconv.HTTPRoute(route))
		name = method + " " + route
	}
	if typ, op := rec.Operation(); typ != "" {
		// A portal page runs the portal's operations in-process: its span keeps its route's name
		// and holds the (last) operation it ran.
		graphQL := strings.HasSuffix(route, "/graphql")
		if graphQL {
			name = typ
		}
		attrs = append(attrs, semconv.GraphQLOperationTypeKey.String(typ))
		if op != "" {
			op = clip(op, maxName)
			if graphQL {
				name += " " + op
			}
			attrs = append(attrs, semconv.GraphQLOperationName(op))
		}
	}
	if c := rec.Caller(); c != nil {
		attrs = append(attrs, AttrCallerKind.String(string(c.Kind)))
		if c.KeyID != "" {
			attrs = append(attrs, AttrKeyID.String(c.KeyID))
		}
		if c.ApplicationID != "" {
			attrs = append(attrs, AttrApplicationID.String(c.ApplicationID))
		}
		if c.Account != nil && c.Account.ID != "" {
			attrs = append(attrs, AttrAccountID.String(c.Account.ID))
		}
	}
	if apis, calls := rec.Charged(); len(apis) > 0 {
		attrs = append(attrs, AttrAPIs.StringSlice(apis), AttrCalls.Int(calls))
	}
	codesAnswered := rec.ErrorCodes()
	if len(codesAnswered) > 0 {
		attrs = append(attrs, semconv.ErrorTypeKey.String(codesAnswered[0]), AttrErrorCodes.StringSlice(codesAnswered))
	} else if status >= http.StatusInternalServerError {
		attrs = append(attrs, semconv.ErrorTypeKey.String(strconv.Itoa(status)))
	}
	if status >= http.StatusInternalServerError {
		span.SetStatus(codes.Error, "")
	}
	span.SetName(name)
	span.SetAttributes(attrs...)
}

// routeOf is the path of a mux pattern ("GET /opendata/flightstatus/{id}", "/graphql"), "" for the
// catch-all, which names no route.
func routeOf(pattern string) string {
	if _, path, ok := strings.Cut(pattern, " "); ok {
		pattern = path
	}
	if pattern == "/" {
		return ""
	}
	return pattern
}

// methodOf is the method as spans name it: one of HTTP's, or _OTHER, so that a client's invented
// methods make no names of their own.
func methodOf(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete,
		http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return m
	}
	return "_OTHER"
}

// statusWriter remembers the status an answer started with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Work starts the span of a search engine's work (travel.Service.Trace), "travel.<work>", when the
// request's span is recorded; it returns the context to work in and what ends the span with the
// work's error.
func (t *Tracer) Work(ctx context.Context, work string) (context.Context, func(error)) {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, untraced
	}
	ctx, span := t.tracer.Start(ctx, "travel."+work, trace.WithAttributes(AttrWork.String(work)))
	return ctx, func(err error) { end(span, err) }
}

// maxQueryText bounds a statement's text in its span: an IN list of a thousand keys is a
// thousand placeholders.
const maxQueryText = 2048

// Statements returns the hook of a store of dialect (store.DB.OnStatement, "postgres" or
// "sqlite"): a client span for each SQL statement made while a request's span is recorded,
// named by its summary ("SELECT flights", db.query.summary), with the statement's text
// (db.query.text, placeholders and never the values; at most maxQueryText bytes).
// Statements outside a recorded request (the background's) make none.
func (t *Tracer) Statements(dialect string) func(ctx context.Context, query string) func(error) {
	system := semconv.DBSystemNameSQLite
	if dialect == "postgres" {
		system = semconv.DBSystemNamePostgreSQL
	}
	return func(ctx context.Context, query string) func(error) {
		if !trace.SpanFromContext(ctx).IsRecording() {
			return untraced
		}
		op, summary := summarize(query)
		_, span := t.tracer.Start(ctx, summary, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(system,
			semconv.DBOperationName(op), semconv.DBQuerySummary(summary), semconv.DBQueryText(clip(query, maxQueryText))))
		return func(err error) { end(span, err) }
	}
}

// end ends a child span with its work's error: no row found is none; any other sets the span's
// status to Error and error.type to the error's code (_OTHER for an error without one). The
// error's message is not recorded: a driver's can quote values.
func end(span trace.Span, err error) {
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		typ := semconv.ErrorTypeOther.Value.AsString()
		var fe *flightgraph.Error
		if errors.As(err, &fe) {
			typ = fe.Code
		}
		span.SetAttributes(semconv.ErrorTypeKey.String(typ))
		span.SetStatus(codes.Error, typ)
	}
	span.End()
}

// untraced ends work that no span watches.
func untraced(error) {}

// summarize returns a statement's operation (its first word: SELECT, INSERT, BEGIN …) and its
// summary: the operation and the table it reads or writes first ("SELECT flights").
func summarize(query string) (op, summary string) {
	q := strings.TrimSpace(query)
	op, rest := firstWord(q)
	op = strings.ToUpper(op)
	var target string
	switch op {
	case "SELECT", "DELETE":
		target = wordAfter(rest, "FROM")
	case "INSERT":
		target = wordAfter(rest, "INTO")
	case "UPDATE":
		target, _ = firstWord(rest)
	}
	if target == "" {
		return op, op
	}
	return op, op + " " + target
}

// firstWord splits s at its first run of spaces.
func firstWord(s string) (word, rest string) {
	s = strings.TrimLeft(s, " \t\r\n")
	i := strings.IndexAny(s, " \t\r\n(")
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

// wordAfter returns the name that follows the first keyword kw in s (a table), "" if none does.
func wordAfter(s, kw string) string {
	for i := 0; ; {
		j := strings.Index(s[i:], kw)
		if j < 0 {
			return ""
		}
		j += i
		after := j + len(kw)
		if (j == 0 || isSpace(s[j-1])) && after < len(s) && isSpace(s[after]) {
			name, _ := firstWord(s[after:])
			return strings.TrimRight(name, ",;)")
		}
		i = after
	}
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }

// clip cuts s to at most n bytes, on a character's boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// ShutdownTimeout bounds how long the spans left at a stop are given to go out.
const ShutdownTimeout = 5 * time.Second
