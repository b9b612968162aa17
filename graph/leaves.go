package graph

import (
	"context"
	"io"
	"reflect"
	"strconv"
	"sync"

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
)

func (s *leafString) MarshalGQL(w io.Writer) { graphql.MarshalString(string(*s)).MarshalGQL(w) }
func (i *leafInt) MarshalGQL(w io.Writer)    { graphql.MarshalInt(int(*i)).MarshalGQL(w) }

// MarshalGQL writes what graphql.MarshalBoolean writes, without its conversion to bytes.
func (b *leafBool) MarshalGQL(w io.Writer) { io.WriteString(w, strconv.FormatBool(bool(*b))) }
