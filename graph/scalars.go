// Package graph holds gqlgen's generated executor (never edited by hand), the per-request
// dataloaders and the custom scalars.
package graph

import (
	"fmt"
	"io"
	"strconv"

	"github.com/99designs/gqlgen/graphql"

	"github.com/flightgraph/flightgraph"
)

// MarshalDate writes a YYYY-MM-DD date.
func MarshalDate(d string) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) { io.WriteString(w, strconv.Quote(d)) })
}

// UnmarshalDate reads a YYYY-MM-DD date; a bad one is INSP_400.002.
func UnmarshalDate(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", flightgraph.ParamErrorf(flightgraph.ECodeBadFormat, "date", "a Date must be a string like 2026-11-22, got %s", fmt.Sprintf("%T", v))
	}
	if _, err := flightgraph.ParseDate("date", s); err != nil {
		return "", err
	}
	return s, nil
}
