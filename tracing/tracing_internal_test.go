package tracing

import (
	"strings"
	"testing"
)

func TestSummarize(t *testing.T) {
	for _, c := range []struct{ query, op, summary string }{
		{"SELECT id, origin FROM flights WHERE id IN ($1, $2)", "SELECT", "SELECT flights"},
		{"\n\t\tselect a.code FROM aircraft a JOIN cabins c ON c.configuration = a.configuration", "SELECT", "SELECT aircraft"},
		{"SELECT cols, (SELECT COUNT(*) FROM flights WHERE x = ?) AS total FROM flights WHERE x = ?", "SELECT", "SELECT flights"},
		{"INSERT INTO audit_log (actor, action) VALUES (?, ?)", "INSERT", "INSERT audit_log"},
		{"UPDATE mail_outbox SET sent_at = ? WHERE id = ?", "UPDATE", "UPDATE mail_outbox"},
		{"DELETE FROM flight_legs WHERE flight_id IN (SELECT id FROM flights)", "DELETE", "DELETE flight_legs"},
		{"BEGIN", "BEGIN", "BEGIN"},
		{"SELECT 1", "SELECT", "SELECT"},
		{"SELECT FROMAGE FROM cheeses", "SELECT", "SELECT cheeses"},
		{"", "", ""},
	} {
		op, summary := summarize(c.query)
		if op != c.op || summary != c.summary {
			t.Errorf("summarize(%q) = %q, %q; want %q, %q", c.query, op, summary, c.op, c.summary)
		}
	}
}

func TestWanted(t *testing.T) {
	for _, c := range []struct {
		name     string
		endpoint string
		env      map[string]string
		want     bool
		err      string
	}{
		{"nothing configured", "", nil, false, ""},
		{"the flag", "http://collector:4318", nil, true, ""},
		{"the standard variable", "", map[string]string{EnvEndpoint: "http://collector:4318"}, true, ""},
		{"the traces' variable", "", map[string]string{EnvTracesEndpoint: "http://collector:4318/v1/traces"}, true, ""},
		{"the SDK disabled", "http://collector:4318", map[string]string{EnvSDKDisabled: "true"}, false, ""},
		{"no exporter", "http://collector:4318", map[string]string{EnvTracesExporter: "none"}, false, ""},
		{"another exporter", "http://collector:4318", map[string]string{EnvTracesExporter: "zipkin"}, false, EnvTracesExporter},
		{"gRPC", "", map[string]string{EnvEndpoint: "http://collector:4317", EnvProtocol: "grpc"}, false, EnvProtocol},
		{"HTTP and JSON", "", map[string]string{EnvEndpoint: "http://collector:4318", EnvTracesProtocol: "http/json"}, true, ""},
	} {
		got, err := Wanted(c.endpoint, func(k string) string { return c.env[k] })
		if got != c.want || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %v, %v; want %v and an error naming %q", c.name, got, err, c.want, c.err)
		}
	}
}

func TestTracesURL(t *testing.T) {
	for base, want := range map[string]string{
		"http://localhost:4318":                   "http://localhost:4318/v1/traces",
		"https://collector.example.com/otlp/":     "https://collector.example.com/otlp/v1/traces",
		"http://user:pass@collector:4318":         "http://collector:4318/v1/traces",
		"localhost:4318":                          "",
		"ftp://collector":                         "",
		"http://collector:4318/?token=s3cret":     "",
		"http://collector:4318/#fragment":         "",
		"collector.example.com:4318/v1/traces":    "",
		"https://:4318":                           "",
		"http://collector:4318/v1/traces?x=1&y=2": "",
	} {
		got, err := TracesURL(base)
		if got != want || (err == nil) != (want != "") {
			t.Errorf("TracesURL(%q) = %q, %v; want %q", base, got, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("TracesURL(%q)'s error quotes the URL: %v", base, err)
		}
	}
}

func TestClip(t *testing.T) {
	if got := clip("héllo", 2); got != "h" {
		t.Errorf("clip cut a character: %q", got)
	}
	if got := clip("hello", 10); got != "hello" {
		t.Errorf("clip(hello, 10) = %q", got)
	}
}
