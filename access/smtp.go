package access

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/flightgraph/flightgraph"
)

// DefaultMailFrom is the sender of outbox mail when the SMTP URL names none.
const DefaultMailFrom = "flightgraph <noreply@flightgraph.local>"

// Mailer sends one message.
type Mailer interface {
	Send(ctx context.Context, m *flightgraph.Mail) error
}

// SendError is a Mailer's failure to send one message, classified for the outbox's retry policy.
// Send wraps it in a flightgraph.Error with code ECodeMail.
type SendError struct {
	// Op is the step that failed: "address", "dial", "tls", "auth", "mail", "rcpt" or "data".
	Op string
	// Code is the SMTP reply code, or 0 when the failure was not a reply.
	Code int
	// Rejected is set when the server refused this message (a reply to RCPT or DATA, or a
	// recipient that does not parse): other messages may still go through. Otherwise the
	// server failed as a whole (unreachable, TLS, authentication), and so will the next message.
	Rejected bool
	// Permanent is set for a rejection that retrying the same message will probably not
	// overcome: a 5xx reply to RCPT or DATA, or a recipient that does not parse.
	Permanent bool
	// Err is the cause.
	Err error

	msg string // Err's text with the password taken out
}

func (e *SendError) Error() string {
	if e.msg != "" {
		return e.msg
	}
	return "smtp " + e.Op + ": " + e.Err.Error()
}

// Unwrap returns the cause, e.g. an *smtp.SMTPError.
func (e *SendError) Unwrap() error { return e.Err }

// SMTPMailer sends mail through one SMTP server. It dials a new connection per message: the
// outbox sends little mail, and a fresh connection never finds a half-closed one.
type SMTPMailer struct {
	addr       string // host:port
	host       string
	implicit   bool // smtps: TLS from the first byte
	local      bool // plain SMTP is allowed, since the traffic never leaves the machine
	tlsConfig  *tls.Config
	user, pass string
	from       *mail.Address
	redacted   string // the URL without its password, for logs
	timeout    time.Duration
}

// NewSMTPMailer parses an SMTP URL:
//
//	smtp://user:pass@host:port   STARTTLS when the server offers it (port 587 by default); a
//	                             server that does not offer it is used in plain text only on
//	                             localhost
//	smtps://user:pass@host:port  TLS from the start (port 465 by default)
//
// The query may set from (an RFC 5322 address, DefaultMailFrom by default) and
// insecure_skip_verify=1, which accepts any server certificate and is meant for tests only. The
// credentials are optional; when given, the client authenticates with PLAIN, or LOGIN when the
// server offers only that. For a bad URL it returns an error naming the problem, which never
// contains the password.
func NewSMTPMailer(rawURL string) (*SMTPMailer, error) {
	s, err := parseSMTPURL(rawURL)
	if err != nil {
		// The text is rewritten without the password, so the cause, which may hold it, is not
		// wrapped.
		return nil, fmt.Errorf("smtp URL: %s", redact(err.Error(), passwordOf(rawURL)))
	}
	return s, nil
}

func parseSMTPURL(rawURL string) (*SMTPMailer, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Error repeats the whole URL, password included: keep only what went wrong.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, err
	}
	s := &SMTPMailer{timeout: 30 * time.Second}
	port := "587"
	switch u.Scheme {
	case "smtp":
	case "smtps":
		s.implicit, port = true, "465"
	case "":
		return nil, errors.New("no scheme: want smtp:// or smtps://")
	default:
		return nil, fmt.Errorf("unknown scheme %q: want smtp or smtps", u.Scheme)
	}
	if u.Opaque != "" || u.Hostname() == "" {
		return nil, errors.New("no host: want smtp://host:port")
	}
	if u.Path != "" && u.Path != "/" {
		return nil, fmt.Errorf("unexpected path %q", u.Path)
	}
	if u.Port() != "" {
		n, err := strconv.Atoi(u.Port())
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("bad port %q: want 1 to 65535", u.Port())
		}
		port = u.Port()
	}
	s.host = u.Hostname()
	s.addr = net.JoinHostPort(s.host, port)
	ip := net.ParseIP(s.host)
	s.local = strings.EqualFold(s.host, "localhost") || ip != nil && ip.IsLoopback()
	if u.User != nil {
		s.user = u.User.Username()
		s.pass, _ = u.User.Password()
		if s.user == "" {
			return nil, errors.New("password without a user name")
		}
	}
	s.tlsConfig = &tls.Config{ServerName: s.host, MinVersion: tls.VersionTLS12}
	from := DefaultMailFrom
	for key, values := range u.Query() {
		v := values[len(values)-1]
		switch key {
		case "from":
			from = v
		case "insecure_skip_verify":
			skip, err := strconv.ParseBool(v)
			if err != nil {
				return nil, fmt.Errorf("insecure_skip_verify=%q: want 1 or 0", v)
			}
			s.tlsConfig.InsecureSkipVerify = skip
		default:
			// A misspelt option would otherwise be ignored in silence.
			return nil, fmt.Errorf("unknown parameter %q: want from or insecure_skip_verify", key)
		}
	}
	if s.from, err = mail.ParseAddress(from); err != nil {
		return nil, fmt.Errorf("from=%q: %w", from, err)
	}
	if u.User != nil {
		u.User = url.User(s.user)
		if s.pass != "" {
			u.User = url.UserPassword(s.user, "xxxxx")
		}
	}
	s.redacted = u.String()
	return s, nil
}

// String returns the URL without its password, for logs.
func (s *SMTPMailer) String() string { return s.redacted }

// Send delivers m to the server, which has accepted it when Send returns nil. It gives up when
// ctx ends, and after 30 s when ctx has no deadline. Errors have code ECodeMail and wrap a
// *SendError; their text never contains the password.
func (s *SMTPMailer) Send(ctx context.Context, m *flightgraph.Mail) error {
	if err := s.send(ctx, m); err != nil {
		return &flightgraph.Error{Code: flightgraph.ECodeMail, Message: "The mail server failed.", Err: err}
	}
	return nil
}

func (s *SMTPMailer) send(ctx context.Context, m *flightgraph.Mail) error {
	to, err := mail.ParseAddress(m.To)
	if err != nil {
		return s.fail("address", fmt.Errorf("recipient %q: %w", m.To, err))
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.timeout)
		defer cancel()
	}
	c, err := s.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()

	if s.user != "" {
		var auth sasl.Client
		switch {
		case c.SupportsAuth(sasl.Plain):
			auth = sasl.NewPlainClient("", s.user, s.pass)
		case c.SupportsAuth(sasl.Login):
			auth = sasl.NewLoginClient(s.user, s.pass)
		default:
			return s.fail("auth", errors.New("the server offers neither AUTH PLAIN nor AUTH LOGIN"))
		}
		if err := c.Auth(auth); err != nil {
			return s.fail("auth", ctxErr(ctx, err))
		}
	}
	var opts *smtp.MailOptions
	if !isASCII(s.from.Address) || !isASCII(to.Address) {
		opts = &smtp.MailOptions{UTF8: true}
	}
	if err := c.Mail(s.from.Address, opts); err != nil {
		return s.fail("mail", ctxErr(ctx, err))
	}
	if err := c.Rcpt(to.Address, nil); err != nil {
		return s.fail("rcpt", ctxErr(ctx, err))
	}
	w, err := c.Data()
	if err != nil {
		return s.fail("data", ctxErr(ctx, err))
	}
	if _, err := w.Write(s.message(m, to)); err != nil {
		return s.fail("data", ctxErr(ctx, err))
	}
	if err := w.Close(); err != nil {
		return s.fail("data", ctxErr(ctx, err))
	}
	// The server took responsibility for the message with its reply to DATA: a failed QUIT
	// must not make the outbox send it twice.
	_ = c.Quit()
	return nil
}

// connect dials the server and secures the connection as the URL asks. go-smtp's client cannot
// upgrade a connection it has greeted on, so on localhost, where a server without STARTTLS is
// acceptable, it greets once to see whether the server offers STARTTLS, and dials again if so.
func (s *SMTPMailer) connect(ctx context.Context) (*smtp.Client, error) {
	conn, err := s.dial(ctx)
	if err != nil {
		return nil, err
	}
	if s.implicit {
		return s.client(ctx, conn), nil
	}
	if s.local {
		c := s.client(ctx, conn)
		if err := c.Hello("localhost"); err != nil {
			c.Close()
			return nil, s.fail("dial", ctxErr(ctx, err))
		}
		if ok, _ := c.Extension("STARTTLS"); !ok {
			return c, nil
		}
		if c.Quit() != nil {
			c.Close()
		}
		if conn, err = s.dial(ctx); err != nil {
			return nil, err
		}
	}
	c, err := smtp.NewClientStartTLS(conn, s.tlsConfig)
	if err == nil {
		s.limit(ctx, c)
		// The handshake happens with the first command after STARTTLS: greet now, so that a bad
		// certificate is reported as such rather than as a failed AUTH or MAIL.
		if err = c.Hello("localhost"); err != nil {
			c.Close()
		}
	} else {
		conn.Close()
		if strings.Contains(err.Error(), "support STARTTLS") {
			err = fmt.Errorf("%w; smtp:// talks plain text only to localhost, use smtps:// for a server with TLS only", err)
		}
	}
	if err != nil {
		return nil, s.fail("tls", ctxErr(ctx, err))
	}
	return c, nil
}

// dial opens a connection that is closed when ctx ends: go-smtp's client knows no contexts.
func (s *SMTPMailer) dial(ctx context.Context) (net.Conn, error) {
	d := &net.Dialer{}
	var conn net.Conn
	var err error
	if s.implicit {
		conn, err = (&tls.Dialer{NetDialer: d, Config: s.tlsConfig}).DialContext(ctx, "tcp", s.addr)
	} else {
		conn, err = d.DialContext(ctx, "tcp", s.addr)
	}
	if err != nil {
		op := "dial"
		var verr *tls.CertificateVerificationError
		if errors.As(err, &verr) {
			op = "tls"
		}
		return nil, s.fail(op, ctxErr(ctx, err))
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	return &stopConn{Conn: conn, stop: stop}, nil
}

// stopConn releases the context callback of a connection when it closes, so that a long-lived
// context does not keep callbacks of connections long gone.
type stopConn struct {
	net.Conn
	stop func() bool
}

func (c *stopConn) Close() error {
	c.stop()
	return c.Conn.Close()
}

func (s *SMTPMailer) client(ctx context.Context, conn net.Conn) *smtp.Client {
	c := smtp.NewClient(conn)
	s.limit(ctx, c)
	return c
}

// limit bounds each command by what is left of ctx, since the client otherwise waits minutes for
// a reply as RFC 5321 recommends.
func (s *SMTPMailer) limit(ctx context.Context, c *smtp.Client) {
	left := s.timeout
	if deadline, ok := ctx.Deadline(); ok {
		left = time.Until(deadline)
	}
	c.CommandTimeout, c.SubmissionTimeout = left, left
}

// fail classifies err and takes the password out of its text.
func (s *SMTPMailer) fail(op string, err error) *SendError {
	e := &SendError{Op: op, Err: err}
	var serr *smtp.SMTPError
	if errors.As(err, &serr) {
		e.Code = serr.Code
	}
	switch op {
	case "address":
		e.Rejected, e.Permanent = true, true
	case "rcpt", "data":
		e.Rejected = e.Code != 0
		e.Permanent = e.Code >= 500
	}
	msg := "smtp " + op + ": " + err.Error()
	if s.pass != "" {
		// No server should echo credentials, but the text lands in the database and the logs.
		plain := base64.StdEncoding.EncodeToString([]byte("\x00" + s.user + "\x00" + s.pass))
		msg = redact(redact(msg, s.pass), plain)
	}
	e.msg = msg
	return e
}

// message renders m as an RFC 5322 message with CRLF line endings. Its Date and Message-Id derive
// from the outbox row, so that a retry sends the same message and a receiver can tell a
// duplicate (the server accepted it but the outbox could not record that).
func (s *SMTPMailer) message(m *flightgraph.Mail, to *mail.Address) []byte {
	date := m.CreatedAt
	if date.IsZero() {
		date = time.Now()
	}
	domain := "flightgraph.local"
	if i := strings.LastIndexByte(s.from.Address, '@'); i >= 0 {
		domain = s.from.Address[i+1:]
	}
	sum := sha256.Sum256([]byte(m.To + "\x00" + m.Subject + "\x00" + m.Body))
	id := fmt.Sprintf("<%s.%d.%s@%s>", strconv.FormatInt(date.UnixNano(), 36), m.ID, hex.EncodeToString(sum[:6]), domain)
	// Line breaks in a subject would end the header; encoded words are folded one per line.
	subject := strings.Join(strings.Fields(m.Subject), " ")
	subject = strings.ReplaceAll(mime.QEncoding.Encode("utf-8", subject), "?= =?", "?=\r\n =?")

	var b bytes.Buffer
	header := func(name, value string) { b.WriteString(name + ": " + value + "\r\n") }
	header("Date", date.Format(time.RFC1123Z))
	header("From", s.from.String())
	header("To", to.String())
	header("Subject", subject)
	header("Message-Id", id)
	header("MIME-Version", "1.0")
	header("Content-Type", "text/plain; charset=utf-8")
	header("Content-Transfer-Encoding", "quoted-printable")
	// Auto-Submitted keeps vacation responders from answering a no-reply address (RFC 3834).
	header("Auto-Submitted", "auto-generated")
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	qp.Write([]byte(m.Body))
	qp.Close()
	if !bytes.HasSuffix(b.Bytes(), []byte("\r\n")) {
		b.WriteString("\r\n")
	}
	return b.Bytes()
}

// ctxErr puts the reason first when ctx ended, since the client then sees only a closed
// connection.
func ctxErr(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil {
		return fmt.Errorf("%w: %w", cause, err)
	}
	return err
}

// passwordOf finds the password in a URL that may not parse.
func passwordOf(rawURL string) string {
	_, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	i := strings.LastIndexByte(rest, '@')
	if i < 0 {
		return ""
	}
	_, pass, _ := strings.Cut(rest[:i], ":")
	return pass
}

// redact replaces secret, raw and percent-decoded, in msg.
func redact(msg, secret string) string {
	if secret == "" {
		return msg
	}
	msg = strings.ReplaceAll(msg, secret, "xxxxx")
	if dec, err := url.PathUnescape(secret); err == nil && dec != "" {
		msg = strings.ReplaceAll(msg, dec, "xxxxx")
	}
	return msg
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// LogMailer writes messages to the log instead of sending them: the embedded default when
// FLIGHTGRAPH_SMTP_URL is unset. It logs the body too, since a developer needs the links in it;
// that is why it is no choice for production.
type LogMailer struct {
	log *slog.Logger
}

// NewLogMailer returns a LogMailer writing to log, or to slog's default logger when log is nil.
func NewLogMailer(log *slog.Logger) *LogMailer {
	if log == nil {
		log = slog.Default()
	}
	return &LogMailer{log: log}
}

// Send implements Mailer; it never fails.
func (l *LogMailer) Send(ctx context.Context, m *flightgraph.Mail) error {
	l.log.InfoContext(ctx, "mail not sent: no SMTP server configured",
		"id", m.ID, "to", m.To, "subject", m.Subject, "body", m.Body)
	return nil
}
