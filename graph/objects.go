package graph

import (
	"bytes"
	"hash/maphash"
	"io"
	"math"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
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

func (o object) MarshalGQL(w io.Writer) {
	var written map[string]bool
	if len(o.fields) > objectScanMax {
		written = make(map[string]bool, len(o.fields))
	}
	io.WriteString(w, "{")
	first := true
	for i := range o.fields {
		alias := o.fields[i].Alias
		if o.writtenBefore(i, alias, written) {
			continue
		}
		if !first {
			io.WriteString(w, ",")
		}
		first = false
		io.WriteString(w, `"`)
		io.WriteString(w, alias)
		io.WriteString(w, `":`)
		if v := o.values[i]; v != nil {
			v.MarshalGQL(w)
		} else {
			io.WriteString(w, "null")
		}
	}
	io.WriteString(w, "}")
}

// writtenBefore reports whether a field before the i-th has alias, and records it in written
// when the object keeps a map.
func (o object) writtenBefore(i int, alias string, written map[string]bool) bool {
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
