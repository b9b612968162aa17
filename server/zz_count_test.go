package server_test

import (
	"os"
	"testing"

	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

func TestZZCount(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	v := newVisitor(t, s.URL, nil)
	v.signIn(s.demo.DeveloperEmail, s.demo.DeveloperPassword)
	for _, p := range []string{"/portal", "/portal/try", "/portal/apis"} {
		v.get(p)
		t.Logf("%s: %d round trips", p, s.queries.Load())
	}
	op := newVisitor(t, s.URL, nil)
	op.signIn(s.demo.OperatorEmail, s.demo.OperatorPassword)
	op.get("/portal/operators")
	t.Logf("/portal/operators: %d round trips", s.queries.Load())
}
