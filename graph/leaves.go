package graph

import (
	"bytes"
	"context"
	"io"
	"reflect"
	"strconv"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
)

// plainField reports whether a field may skip graphql.ResolveField: a leaf read from its
// object's struct (graph/gen gives such leaves that path: inlineLeaves), or another field with no
// directive middleware, which then runs as ResolveField runs it without its closures and calls
// (inlineFields; TestFieldsAnswerAsGqlgen holds it to gqlgen's answers and errors).
//
// For every field, whatever it is, gqlgen builds a field context (with a closure and an error for
// the children a scalar never has), puts it in a new context, boxes the value, and runs the
// operation's field middleware and a panic handler around a closure that returns obj.F. For a
// leaf that is a struct's field, marshalled by a scalar's or an enum's marshaller that reads
// nothing but the value, none of that changes the answer, with one exception that the path
// handles: a non-null leaf whose value marshals as null takes gqlgen's path after all, so that
// its error names the field. The Departures board is mostly such leaves.
//
// What the path does skip is the field middleware, which may refuse or change a field. So it is
// taken only when the operation's middleware is gqlgen's own pass-through, that of an executor
// with no extension: no FieldInterceptor is installed (today none is; the gate's checks are at
// the operation and its root fields). Any other middleware, or a gqlgen whose pass-through is not
// found, keeps every field on gqlgen's path.
func plainField(oc *graphql.OperationContext) bool {
	pass := passThrough()
	return pass != 0 && reflect.ValueOf(oc.ResolverMiddleware).Pointer() == pass
}

// passThrough is the code of gqlgen's field middleware when no extension is installed, or 0 when
// it cannot be found.
var passThrough = sync.OnceValue(func() (pass uintptr) {
	defer func() {
		if recover() != nil {
			pass = 0
		}
	}()
	ctx := graphql.StartOperationTrace(context.Background())
	oc, err := executor.New(NewExecutableSchema(Config{})).CreateOperationContext(ctx, &graphql.RawParams{Query: "{ __typename }"})
	if err != nil || oc.ResolverMiddleware == nil {
		return 0
	}
	return reflect.ValueOf(oc.ResolverMiddleware).Pointer()
})

// A leaf on the path is marshalled where it lies in its object's struct, as one of these
// pointers: a pointer in a graphql.Marshaler costs nothing, where gqlgen's marshallers return a
// closure over a copy of the value, an allocation for every leaf of every object (a seventh of
// a board's). Each writes what gqlgen's marshaller of its kind writes (the call, inlined, keeps
// its closure on the stack); graph/gen uses them for non-null String, ID, enum, Int and Boolean
// leaves. The struct is read when the object is written, within the same answer: objects the
// resolvers hand out are not written afterwards.
type (
	leafString string
	leafInt    int
	leafBool   bool
	leafTime   time.Time // never zero, which gqlgen writes null
)

// MarshalGQL writes what graphql.MarshalTime writes for a time that is not zero: the time in
// RFC 3339 with nanoseconds, quoted (strconv.Quote changes none of its characters), without the
// closure, the string and its quoted copy that gqlgen allocates.
func (t *leafTime) MarshalGQL(w io.Writer) {
	b, ok := w.(*bytes.Buffer)
	if !ok {
		graphql.MarshalTime(time.Time(*t)).MarshalGQL(w)
		return
	}
	a := append(b.AvailableBuffer(), '"')
	a = time.Time(*t).AppendFormat(a, time.RFC3339Nano)
	b.Write(append(a, '"'))
}

func (s *leafString) MarshalGQL(w io.Writer) { writeString(w, string(*s)) }

func (i *leafInt) MarshalGQL(w io.Writer) {
	if b, ok := w.(*bytes.Buffer); ok {
		b.Write(strconv.AppendInt(b.AvailableBuffer(), int64(*i), 10))
		return
	}
	graphql.MarshalInt(int(*i)).MarshalGQL(w)
}

// writeString writes s as a JSON string as graphql.MarshalString does: the bytes of s, with a
// quote, a backslash and the controls below 0x20 escaped (\t, \r, \n, else \u00XX), nothing else
// (invalid UTF-8 is written as it is). Into the answer's buffer, as the executor writes, it does
// so without gqlgen's per-rune decoding and its three interface calls a string: those bytes are
// never part of a multi-byte rune, so scanning bytes finds what scanning runes finds.
func writeString(w io.Writer, s string) {
	b, ok := w.(*bytes.Buffer)
	if !ok {
		graphql.MarshalString(s).MarshalGQL(w)
		return
	}
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '\\' && c != '"' {
			continue
		}
		b.WriteString(s[start:i])
		switch c {
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		case '\n':
			b.WriteString(`\n`)
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		default:
			b.WriteString(`\u00`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		}
		start = i + 1
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}

// hexDigits are gqlgen's, upper case.
const hexDigits = "0123456789ABCDEF"

// MarshalGQL writes what graphql.MarshalBoolean writes, without its conversion to bytes.
func (b *leafBool) MarshalGQL(w io.Writer) { io.WriteString(w, strconv.FormatBool(bool(*b))) }
