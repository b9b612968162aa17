package flightgraph

// MaxPageSize bounds every list the service returns in one answer.
const MaxPageSize = 200

// DefaultPageSize is the page size when a caller gives none.
const DefaultPageSize = 20

// Page is an offset-based window over an ordered list. GraphQL cursors and REST pageNumber both
// translate to it.
type Page struct {
	Offset int
	Limit  int
	// Uncounted spares the store counting every match, which costs as much as reading them: the
	// total it returns is then 0. The offers engine reads its candidates so.
	Uncounted bool
}

// Validate checks the page bounds; it returns ECodeInvalidParameter.
func (p *Page) Validate() error {
	if p.Limit == 0 {
		p.Limit = DefaultPageSize
	}
	if p.Limit < 0 || p.Limit > MaxPageSize {
		return ParamErrorf(ECodeInvalidParameter, "first", "page size must be between 1 and %d, got %d", MaxPageSize, p.Limit)
	}
	if p.Offset < 0 {
		return ParamErrorf(ECodeInvalidParameter, "after", "page offset must not be negative")
	}
	return nil
}
