package graph

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestObjectWritesAsFieldSet: an object writes what gqlgen's FieldSet writes for the same fields
// and values: none, one, an alias kept twice (the first wins), and more fields than it looks
// back along.
func TestObjectWritesAsFieldSet(t *testing.T) {
	field := func(alias string) graphql.CollectedField {
		return graphql.CollectedField{Field: &ast.Field{Alias: alias, Name: alias}}
	}
	many := func(n int, dup int) []graphql.CollectedField {
		var fs []graphql.CollectedField
		for i := range n {
			fs = append(fs, field(fmt.Sprintf("f%d", i%(n-dup))))
		}
		return fs
	}
	for _, fields := range [][]graphql.CollectedField{
		nil,
		{field("id")},
		{field("id"), field("name"), field("id"), field("__typename")},
		many(objectScanMax, 0),
		many(objectScanMax+1, 3),
		many(3*objectScanMax, objectScanMax),
	} {
		values := make([]graphql.Marshaler, len(fields))
		for i := range values {
			values[i] = graphql.MarshalInt(i)
		}
		var gqlgens, ours bytes.Buffer
		fs := graphql.NewFieldSet(fields)
		copy(fs.Values, values)
		fs.MarshalGQL(&gqlgens)
		(&object{fields, values}).MarshalGQL(&ours)
		if ours.String() != gqlgens.String() {
			t.Errorf("%d fields: object writes\n%s\nFieldSet\n%s", len(fields), ours.String(), gqlgens.String())
		}
		var other strings.Builder // not the executor's buffer
		(&object{fields, values}).MarshalGQL(&other)
		if other.String() != gqlgens.String() {
			t.Errorf("%d fields: object writes into a strings.Builder\n%s\nFieldSet\n%s", len(fields), other.String(), gqlgens.String())
		}
	}
}

// pieces writes n bytes of JSON string in pieces of 100, allocating nothing.
type pieces int

var piece, quote = bytes.Repeat([]byte("x"), 100), []byte(`"`)

func (p pieces) MarshalGQL(w io.Writer) {
	w.Write(quote)
	for n := int(p); n > 0; n -= 100 {
		w.Write(piece[:min(n, 100)])
	}
	w.Write(quote)
}

// TestMarshalDataSizesAhead: the data is what the answer writes; the first answer of a document
// grows its buffer by doubling, the next ones of the same document are written into one buffer
// sized ahead (a size that changes by less than an eighth included); a document of another text
// that falls in the same slot finds no hint there (whoever sends it cannot make another
// document's answers allocate more), and a huge answer leaves a hint of at most maxDataHint.
func TestMarshalDataSizesAhead(t *testing.T) {
	board := &graphql.OperationContext{RawQuery: "query Board { flights { id } } # " + t.Name()}
	slot := func(op *graphql.OperationContext) *atomic.Uint64 {
		s, _ := dataSlot(op)
		return s
	}
	if got := string(marshalData(board, pieces(250))); got != `"`+strings.Repeat("x", 250)+`"` {
		t.Fatalf("data %q", got)
	}
	allocs := func(op *graphql.OperationContext, n int) float64 {
		var data graphql.Marshaler = pieces(n) // boxed once, outside the count
		return testing.AllocsPerRun(20, func() { marshalData(op, data) })
	}
	// Sized ahead, an answer takes its buffer and the buffer's header: 2 allocations.
	if n := allocs(board, 60_000); n > 2 {
		t.Errorf("a 60 KB answer after answers of 60 KB took %v allocations, want 2 (its buffer, sized ahead)", n)
	}
	if n := allocs(board, 60_000+60_000/10); n > 2 {
		t.Errorf("an answer a tenth larger took %v allocations, want 2", n)
	}

	// Another text in the board's slot: each finds no hint where the other answered last (it
	// grows its buffer as a fresh document does); a huge answer leaves a hint of at most
	// maxDataHint.
	other := &graphql.OperationContext{RawQuery: "query Other { flights { id } } # " + t.Name()}
	for i := 0; slot(other) != slot(board); i++ {
		other.RawQuery = fmt.Sprintf("query Other%d { flights { id } } # %s", i, t.Name())
	}
	var small graphql.Marshaler = pieces(60_000)
	if n := testing.AllocsPerRun(1, func() { marshalData(board, small); marshalData(other, small) }); n < 7 {
		t.Errorf("another text in the board's slot took %v allocations with the board's, want its first answer's many grows: it used the board's hint", n)
	}
	marshalData(other, pieces(3*maxDataHint))
	if got := slot(other).Load() & math.MaxUint32; got != maxDataHint {
		t.Errorf("the hint after a %d-byte answer is %d, want %d", 3*maxDataHint, got, maxDataHint)
	}

	// The board's first operation answers small after large (other variables): the answer
	// keeps a buffer of about its size, not of the hint's, since the caches keep what they get;
	// its other operation has a size of its own.
	marshalData(board, pieces(200_000))
	if b := marshalData(board, pieces(1000)); cap(b) > 1002+1002/4+dataSlack {
		t.Errorf("a 1 KB answer after one of 200 KB keeps a buffer of %d bytes", cap(b))
	}
	second := &graphql.OperationContext{RawQuery: board.RawQuery, OperationName: "Second"}
	s1, t1 := dataSlot(board)
	s2, t2 := dataSlot(second)
	if s1 == s2 && t1 == t2 {
		t.Error("the document's two operations share their hint")
	}

	// Without a hint: a fresh document's first answer of 60 KB grows its buffer many times.
	fresh := &graphql.OperationContext{RawQuery: "query Fresh { flights { id } } # " + t.Name()}
	var data graphql.Marshaler = pieces(60_000)
	if n := testing.AllocsPerRun(1, func() { slot(fresh).Store(0); marshalData(fresh, data) }); n < 5 {
		t.Errorf("a first answer of 60 KB took %v allocations; the hint's test above measures nothing", n)
	}
}

// TestObjectsTakeTheirOwn: objects taken by many goroutines of one operation at once (as
// concurrent fields and lists take them) each get values of their own, of their fields' number,
// which no other object's writes reach, past several chunks; a subscription's objects are made
// one by one, the stream's executor keeping no chunk.
func TestObjectsTakeTheirOwn(t *testing.T) {
	query := &graphql.OperationContext{Operation: &ast.OperationDefinition{Operation: ast.Query}}
	var o objects
	const goroutines, each = 8, 3 * objectChunkMax
	got := make([][]*object, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				fields := make([]graphql.CollectedField, 1+i%5)
				set, answer := o.take(query, fields)
				if len(set.Values) != len(fields) || cap(set.Values) != len(fields) || len(answer.values) != len(fields) {
					t.Errorf("%d fields: %d values (capacity %d), answer %d", len(fields), len(set.Values), cap(set.Values), len(answer.values))
					return
				}
				for k := range set.Values {
					set.Values[k] = graphql.MarshalInt(g*each + i)
				}
				got[g] = append(got[g], answer)
			}
		})
	}
	wg.Wait()
	for g, answers := range got {
		for i, answer := range answers {
			want := fmt.Sprint(g*each + i)
			for _, v := range answer.values {
				if s := written(t, v); s != want {
					t.Fatalf("goroutine %d's object %d holds %s, want %s: another object's values reached it", g, i, s, want)
				}
			}
		}
	}

	stream := &graphql.OperationContext{Operation: &ast.OperationDefinition{Operation: ast.Subscription}}
	var s objects
	for range 10 {
		s.take(stream, make([]graphql.CollectedField, 3))
	}
	if s.sets != nil || s.values != nil {
		t.Errorf("a subscription's executor keeps a chunk of %d sets and %d values", len(s.sets), len(s.values))
	}
}
