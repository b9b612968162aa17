package graph

import (
	"net/http/httptest"
	"testing"
)

// TestSSEWriterWritesNothingOnceOver: once the stream's handler is over (close), a late write
// (the SSE transport's keep-alive ping, whose goroutine stops only when the request's context
// ends) reaches nothing and fails, and a flush flushes nothing; before, both pass through.
func TestSSEWriterWritesNothingOnceOver(t *testing.T) {
	rec := httptest.NewRecorder()
	w := &sseWriter{ResponseWriter: rec}
	if _, err := w.Write([]byte(": ping\n\n")); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if !rec.Flushed || rec.Body.String() != ": ping\n\n" {
		t.Fatalf("before the end: flushed %v, body %q", rec.Flushed, rec.Body.String())
	}
	w.close()
	rec.Flushed = false
	if n, err := w.Write([]byte(": ping\n\n")); n != 0 || err != errStreamOver {
		t.Errorf("a write after the end: %d, %v; want 0, errStreamOver", n, err)
	}
	w.Flush()
	if rec.Flushed || rec.Body.String() != ": ping\n\n" {
		t.Errorf("after the end: flushed %v, body %q", rec.Flushed, rec.Body.String())
	}
}
