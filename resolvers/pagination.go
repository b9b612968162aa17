package resolvers

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/graph/model"
)

// Cursors are opaque to clients: the base64 of the item's offset in its ordered list, below
// maxOffset (no list is that long, and the next page's offset must not overflow).
const (
	cursorPrefix = "offset:"
	maxOffset    = 1 << 30
)

func encodeCursor(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.Itoa(offset)))
}

// page turns Relay arguments into a Page; a cursor this service did not make is INSP_400.002.
func page(first *int, after *string) (flightgraph.Page, error) {
	p := flightgraph.Page{Limit: flightgraph.DefaultPageSize}
	if first != nil {
		n, err := firstOf(first)
		if err != nil {
			return p, err
		}
		p.Limit = n
	}
	if after != nil && *after != "" {
		raw, err := base64.RawURLEncoding.DecodeString(*after)
		n, err2 := strconv.Atoi(strings.TrimPrefix(string(raw), cursorPrefix))
		if err != nil || err2 != nil || !strings.HasPrefix(string(raw), cursorPrefix) || n < 0 || n >= maxOffset {
			return p, flightgraph.ParamErrorf(flightgraph.ECodeBadFormat, "after", "after is not a cursor of this list")
		}
		p.Offset = n + 1
	}
	return p, nil
}

// firstOf reads the first argument of a list that answers all its items when it is absent (its
// @listSize assumes their number): 0 for all, else first, 1 to MaxPageSize (INSP_400.001 naming
// first otherwise, as page refuses a connection's). The cost model counts first items in its
// stead (graph/cost.go), so a client pays for the page it asks for.
func firstOf(first *int) (int, error) {
	if first == nil {
		return 0, nil
	}
	if *first < 1 || *first > flightgraph.MaxPageSize {
		return 0, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "first", "first must be between 1 and %d, got %d", flightgraph.MaxPageSize, *first)
	}
	return *first, nil
}

// head returns the first n items of list, or all of them when n is 0.
func head[T any](list []T, n int) []T {
	if n > 0 && len(list) > n {
		return list[:n]
	}
	return list
}

// pageInfo describes a page of n items at p within total.
func pageInfo(p flightgraph.Page, n, total int) *model.PageInfo {
	info := &model.PageInfo{HasNextPage: p.Offset+n < total, HasPreviousPage: p.Offset > 0}
	if n > 0 {
		start, end := encodeCursor(p.Offset), encodeCursor(p.Offset+n-1)
		info.StartCursor, info.EndCursor = &start, &end
	}
	return info
}

// edges builds a connection's edges with their cursors.
func edges[N, E any](p flightgraph.Page, nodes []*N, edge func(cursor string, n *N) *E) []*E {
	out := make([]*E, len(nodes))
	for i, n := range nodes {
		out[i] = edge(encodeCursor(p.Offset+i), n)
	}
	return out
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
