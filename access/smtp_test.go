package access_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
)

func TestSMTPMailerTLS(t *testing.T) {
	for _, tc := range []struct {
		name     string
		scheme   string
		implicit bool
	}{
		{"STARTTLS", "smtp", false},
		{"implicit TLS", "smtps", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startSMTP(t, "127.0.0.1:0", withTLS(t, tc.implicit))
			m := &flightgraph.Mail{ID: 1, To: "ada@example.com", Subject: "TLS", Body: "over TLS\n"}

			// The certificate is self-signed: verified, it fails, and says why.
			err := MustSMTPMailer(t, srv.url(tc.scheme, testPassword, "")).Send(context.Background(), m)
			var se *access.SendError
			if !errors.As(err, &se) || se.Op != "tls" || se.Rejected || flightgraph.ErrorCode(err) != flightgraph.ECodeMail {
				t.Fatalf("Send to an untrusted server = %v, want a tls SendError with code %s", err, flightgraph.ECodeMail)
			}

			if err := MustSMTPMailer(t, srv.url(tc.scheme, testPassword, "insecure_skip_verify=1")).Send(context.Background(), m); err != nil {
				t.Fatalf("Send: %v", err)
			}
			if got := srv.received(); len(got) != 1 || !got[0].tls {
				t.Fatalf("server received %+v, want one message over TLS", got)
			}
		})
	}
}

func TestSMTPMailerErrors(t *testing.T) {
	srv := startSMTP(t, "127.0.0.1:0")
	m := &flightgraph.Mail{ID: 1, To: "ada@example.com", Subject: "Hi", Body: "Hi\n"}
	for _, tc := range []struct {
		name      string
		url       string
		mail      *flightgraph.Mail
		op        string
		rejected  bool
		permanent bool
	}{
		{"wrong password", srv.url("smtp", "wrong-"+testPassword, ""), m, "auth", false, false},
		{"bad recipient", srv.url("smtp", testPassword, ""), &flightgraph.Mail{To: "not an address", Subject: "Hi", Body: "Hi"}, "address", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := MustSMTPMailer(t, tc.url).Send(context.Background(), tc.mail)
			var se *access.SendError
			if !errors.As(err, &se) || se.Op != tc.op || se.Rejected != tc.rejected || se.Permanent != tc.permanent {
				t.Fatalf("Send = %#v, want op %s, rejected %v, permanent %v", err, tc.op, tc.rejected, tc.permanent)
			}
			t.Log(err)
			if strings.Contains(err.Error(), testPassword) {
				t.Fatalf("error %q contains the password", err)
			}
		})
	}
}

func TestNewSMTPMailer(t *testing.T) {
	const password = "hunter2-S3CRET"
	for _, tc := range []struct {
		name    string
		url     string
		wantErr string // a part of the error; "" for none
		want    string // String() when there is no error
	}{
		{"STARTTLS", "smtp://u:" + password + "@mail.example.com", "", "smtp://u:xxxxx@mail.example.com"},
		{"implicit TLS with port", "smtps://u:" + password + "@mail.example.com:2465?from=a%40example.com", "", "smtps://u:xxxxx@mail.example.com:2465?from=a%40example.com"},
		{"local without credentials", "smtp://localhost:2525", "", "smtp://localhost:2525"},
		{"unknown scheme", "http://u:" + password + "@mail.example.com:25", "unknown scheme", ""},
		{"no scheme", "mail.example.com:25", "scheme", ""},
		{"no host", "smtp://u:" + password + "@:25", "no host", ""},
		{"no host at all", "smtp:///", "no host", ""},
		{"opaque", "smtp:mail.example.com", "no host", ""},
		{"port not a number", "smtp://u:" + password + "@mail.example.com:abc", "port", ""},
		{"port out of range", "smtp://u:" + password + "@mail.example.com:70000", "bad port", ""},
		{"port zero", "smtp://u:" + password + "@mail.example.com:0", "bad port", ""},
		{"bad escape in password", "smtp://u:" + password + "%zz@mail.example.com", "escape", ""},
		{"password without user", "smtp://:" + password + "@mail.example.com", "user name", ""},
		{"bad from", "smtp://u:" + password + "@mail.example.com?from=nobody", "from=", ""},
		{"unknown parameter", "smtp://u:" + password + "@mail.example.com?form=a%40example.com", "unknown parameter", ""},
		{"bad insecure_skip_verify", "smtp://u:" + password + "@mail.example.com?insecure_skip_verify=maybe", "insecure_skip_verify", ""},
		{"path", "smtp://u:" + password + "@mail.example.com/inbox", "path", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := access.NewSMTPMailer(tc.url)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("NewSMTPMailer: %v", err)
				}
				if m.String() != tc.want {
					t.Fatalf("String() = %q, want %q", m.String(), tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("NewSMTPMailer(%q) succeeded, want an error about %q", tc.url, tc.wantErr)
			}
			t.Log(err)
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q does not mention %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), password) || strings.Contains(err.Error(), "S3CRET") {
				t.Errorf("error %q contains the password", err)
			}
		})
	}
}

func TestLogMailer(t *testing.T) {
	var buf bytes.Buffer
	mailer := access.NewLogMailer(slog.New(slog.NewTextHandler(&buf, nil)))
	err := mailer.Send(context.Background(), &flightgraph.Mail{ID: 7, To: "ada@example.com", Subject: "Your key is approved", Body: "https://portal.example.com/keys/1"})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	for _, want := range []string{"ada@example.com", "Your key is approved"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log %q does not mention %q", buf.String(), want)
		}
	}
}
