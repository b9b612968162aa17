package rest

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/flightgraph/flightgraph"
)

// link is a HAL link.
type link struct {
	Href string `json:"href"`
}

// links are a resource's HAL links.
type links struct {
	Self link  `json:"self"`
	Next *link `json:"next,omitempty"`
	Prev *link `json:"prev,omitempty"`
}

// page is the documented paging block.
type page struct {
	PageSize   int `json:"pageSize"`
	PageNumber int `json:"pageNumber"`
	FullCount  int `json:"fullCount"`
	PageCount  int `json:"pageCount"`
	TotalPages int `json:"totalPages"`
}

// DefaultPageSize and MaxPageSize bound REST lists.
const (
	DefaultPageSize = 10
	MaxPageSize     = 100
)

// paging reads pageSize and pageNumber (0-based).
func paging(q url.Values) (flightgraph.Page, error) {
	size, num := DefaultPageSize, 0
	if n, ok, err := number(q, "pageSize"); err != nil {
		return flightgraph.Page{}, err
	} else if ok {
		if n < 1 || n > MaxPageSize {
			return flightgraph.Page{}, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "pageSize", "pageSize must be between 1 and %d", MaxPageSize)
		}
		size = n
	}
	if n, ok, err := number(q, "pageNumber"); err != nil {
		return flightgraph.Page{}, err
	} else if ok {
		if n < 0 || n > 100000 {
			return flightgraph.Page{}, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "pageNumber", "pageNumber must be 0 or more")
		}
		num = n
	}
	return flightgraph.Page{Limit: size, Offset: size * num}, nil
}

// number reads an optional whole-number query parameter; ok is false when it is absent, and a
// value that is not a number is INSP_400.002 naming it.
func number(q url.Values, name string) (n int, ok bool, err error) {
	v := q.Get(name)
	if v == "" {
		return 0, false, nil
	}
	if n, err = strconv.Atoi(v); err != nil {
		return 0, false, flightgraph.ParamErrorf(flightgraph.ECodeBadFormat, name, "%s must be a number, got %q", name, v)
	}
	return n, true, nil
}

// pageOf describes the page p of a list of total items of which n are on it, with its links.
func pageOf(r *http.Request, p flightgraph.Page, n, total int) (page, links) {
	num := p.Offset / p.Limit
	pg := page{PageSize: p.Limit, PageNumber: num, FullCount: total, PageCount: n, TotalPages: (total + p.Limit - 1) / p.Limit}
	at := func(k int) *link {
		q := r.URL.Query()
		q.Set("pageNumber", strconv.Itoa(k))
		q.Set("pageSize", strconv.Itoa(p.Limit))
		return &link{Href: r.URL.Path + "?" + q.Encode()}
	}
	ls := links{Self: link{Href: r.URL.RequestURI()}}
	if num+1 < pg.TotalPages {
		ls.Next = at(num + 1)
	}
	if num > 0 {
		ls.Prev = at(min(num-1, max(pg.TotalPages-1, 0)))
	}
	return pg, ls
}

func self(r *http.Request) links { return links{Self: link{Href: r.URL.RequestURI()}} }

// render writes a HAL document in the negotiated media type.
func render(w http.ResponseWriter, r *http.Request, v any) {
	renderStatus(w, r, http.StatusOK, v)
}

// renderStatus is render with another status, such as 201 Created.
func renderStatus(w http.ResponseWriter, r *http.Request, status int, v any) {
	writeJSON(w, status, contentType(r.Context()), v)
}
