package graph

import (
	"bytes"
	"hash/maphash"
	"io"
	"math"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// marshalData is an operation's data as JSON, as gqlgen's generated Exec marshals it (graph/gen
// puts it there), into a buffer sized ahead from what the same document's operation answered
// last: grown by doubling from nothing, a board of 54 KB went through a dozen buffers, 125 KB in all, each
// cleared and copied into the next. A hint is only a size: a wrong one costs a grow or some
// unused capacity, never a different answer. It is the document's own (a slot keeps the hash of
// the text it was given for, and another text finds no hint there), so that nobody's documents
// make another's answers allocate more than that document answers itself, and at most
// maxDataHint.
func marshalData(opCtx *graphql.OperationContext, data graphql.Marshaler) []byte {
	slot, tag := dataSlot(opCtx)
	var hint uint64
	if v := slot.Load(); v>>32 == tag {
		hint = v & math.MaxUint32
	}
	buf := bytes.NewBuffer(make([]byte, 0, hint))
	data.MarshalGQL(buf)
	// An eighth more than this answer, so that one a little larger next time is not grown by
	// doubling.
	slot.Store(tag<<32 | uint64(min(buf.Len()+buf.Len()/8, maxDataHint)))
	// An answer much smaller than its hint (the same text with other variables) is copied into
	// a buffer of its size: the response caches keep what they are given, and a small answer in
	// a large buffer holds the larger.
	if b := buf.Bytes(); cap(b)-len(b) > len(b)/4+dataSlack {
		return bytes.Clone(b)
	}
	return buf.Bytes()
}

// dataSlack is the room past a quarter of an answer that it may keep unused.
const dataSlack = 4 << 10

// dataSlot is the slot of an operation's answers' size (a hash of its document's text and its
// name, so that the same document parsed again finds its size, and its other operations their
// own), and the tag the slot keeps beside the size: the top half of that hash.
func dataSlot(opCtx *graphql.OperationContext) (*atomic.Uint64, uint64) {
	h := maphash.String(dataSeed, opCtx.RawQuery) ^ maphash.String(dataSeed, opCtx.OperationName)*0x9e3779b97f4a7c15
	return &dataSizes[h%uint64(len(dataSizes))], h >> 32
}

// dataSizes are the answers' sizes, each beside its tag (dataSlot); dataSeed is their hash's
// seed, this process's own.
var (
	dataSizes [256]atomic.Uint64
	dataSeed  = maphash.MakeSeed()
)

// maxDataHint is the largest buffer a hint asks for ahead (512 KB, twice a board of 100
// flights): larger answers, which are rare and slow anyway, grow from there.
const maxDataHint = 512 << 10

// object is an object's answer: its fields as CollectFields gave them and their values, in the
// same order (graph/gen returns it where gqlgen's generated code returns the object's FieldSet,
// once every value is in). It writes what FieldSet.MarshalGQL writes, a field per alias, the
// first of an alias that CollectFields kept twice (one name under object types it could not tell
// apart), without a map of the aliases written for every object: for a few fields, as objects
// have, looking back along the list is cheaper. An alias is a GraphQL name, which needs no
// escaping in JSON. A nil value, on which FieldSet would panic, is written null; the generated
// code sets every value before it returns the object.
type object struct {
	fields []graphql.CollectedField
	values []graphql.Marshaler
}

// objectScanMax is the most fields an object looks back along for an alias written before; an
// object with more keeps a map.
const objectScanMax = 32

func (o *object) MarshalGQL(w io.Writer) {
	b, ok := w.(*bytes.Buffer)
	if !ok {
		// The executor writes into a buffer (marshalData); anything else gets the same bytes.
		var buf bytes.Buffer
		o.MarshalGQL(&buf)
		w.Write(buf.Bytes())
		return
	}
	var written map[string]bool
	if len(o.fields) > objectScanMax {
		written = make(map[string]bool, len(o.fields))
	}
	b.WriteByte('{')
	first := true
	for i := range o.fields {
		alias := o.fields[i].Alias
		if o.writtenBefore(i, alias, written) {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteByte('"')
		b.WriteString(alias)
		b.WriteString(`":`)
		if v := o.values[i]; v != nil {
			v.MarshalGQL(b)
		} else {
			b.WriteString("null")
		}
	}
	b.WriteByte('}')
}

// writtenBefore reports whether a field before the i-th has alias, and records it in written
// when the object keeps a map.
func (o *object) writtenBefore(i int, alias string, written map[string]bool) bool {
	if written != nil {
		if written[alias] {
			return true
		}
		written[alias] = true
		return false
	}
	for j := range i {
		if o.fields[j].Alias == alias {
			return true
		}
	}
	return false
}

// objects hands an operation's objects what each makes for its answer, its FieldSet (whose
// values the generated code sets and whose Dispatch runs its concurrent fields), its values and
// the object it returns, from chunks of many rather than three allocations apiece (graph/gen puts
// it where gqlgen's generated code calls graphql.NewFieldSet and returns the object): a board of
// 20 flights has some 450 objects, each of which is garbage the moment the answer is written, all
// at once. A chunk is as large as the objects the operation has taken so far (from
// objectChunkMin to objectChunkMax), so that a small operation takes little. The executor's
// context has one for its operation; objects are made on the goroutines of concurrent fields and
// lists, hence the lock. The FieldSet's own fields stay unset: object writes the answer, and a
// deferred field's set is one of its own (deferredFields).
type objects struct {
	mu     sync.Mutex
	taken  int
	sets   []objectSet
	values []graphql.Marshaler
}

// objectSet is an object's FieldSet and its answer, whose values are the set's.
type objectSet struct {
	set    graphql.FieldSet
	answer object
}

const (
	objectChunkMin = 8
	objectChunkMax = 256
)

// take returns an object's FieldSet of len(fields) values and its answer, which writes fields with
// those values. A subscription's objects are made one by one: its executor's context lasts as
// long as the stream, and would hold a chunk for each of the streams a replica serves.
func (o *objects) take(op *graphql.OperationContext, fields []graphql.CollectedField) (*graphql.FieldSet, *object) {
	if op.Operation != nil && op.Operation.Operation == ast.Subscription {
		s := &objectSet{set: graphql.FieldSet{Values: make([]graphql.Marshaler, len(fields))}}
		s.answer = object{fields, s.set.Values}
		return &s.set, &s.answer
	}
	o.mu.Lock()
	chunk := min(max(o.taken, objectChunkMin), objectChunkMax)
	if len(o.sets) == 0 {
		o.sets = make([]objectSet, chunk)
	}
	s := &o.sets[0]
	o.sets = o.sets[1:]
	n := len(fields)
	if len(o.values) < n {
		o.values = make([]graphql.Marshaler, max(n, 4*chunk)) // objects have a few fields each
	}
	values := o.values[:n:n]
	o.values = o.values[n:]
	o.taken++
	o.mu.Unlock()
	s.set.Values = values
	s.answer = object{fields, values}
	return &s.set, &s.answer
}
