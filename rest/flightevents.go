package rest

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/live"
)

const (
	eventStream = "text/event-stream"
	// EventsPath is the Flight Status API's stream of status events.
	EventsPath = "/opendata/flightstatus/events"
	// eventsKeepAlive is how often an idle stream sends a comment, so that proxies keep it open.
	eventsKeepAlive = 15 * time.Second
)

// flightEventDoc is one event of the stream: the change, and where the flight's status is.
type flightEventDoc struct {
	Position          string    `json:"position"`
	FlightID          string    `json:"flightId"`
	Kind              string    `json:"kind"`
	Status            string    `json:"flightStatusPublic"`
	Leg               int       `json:"leg,omitempty"`
	DepartureDelay    int       `json:"departureDelayMinutes"`
	ArrivalDelay      int       `json:"arrivalDelayMinutes"`
	DepartureGate     string    `json:"departureGate,omitempty"`
	DepartureTerminal string    `json:"departureTerminal,omitempty"`
	At                time.Time `json:"recordedAt"`
	Links             struct {
		Flight link `json:"flight"`
	} `json:"_links"`
}

// flightEvents answers GET /opendata/flightstatus/events: the status events of the flights of
// flightIds (comma-separated), or of a departures or arrivals board (departures=AMS,
// arrivals=AMS), as server-sent events. Each event's id is its position: a client that
// reconnects with Last-Event-ID (or after=) has what it missed replayed first. The stream ends
// with an "error" event carrying the documented error body when it is cut (STREAM_409.000: resume
// from the last id; STREAM_403.000: the key no longer opens the API).
func (a *API) flightEvents(w http.ResponseWriter, r *http.Request) {
	if a.Live == nil {
		a.Error(w, r, flightgraph.Errorf(flightgraph.ECodeUnknownPath, "the events stream is not served here"))
		return
	}
	q := r.URL.Query()
	var (
		f   live.Filter
		err error
	)
	switch {
	case q.Get("flightIds") != "":
		ids := strings.Split(q.Get("flightIds"), ",")
		if len(ids) > live.MaxFlightIDs {
			a.Error(w, r, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "flightIds", "at most %d flights", live.MaxFlightIDs))
			return
		}
		for _, id := range ids {
			fid, err := flightgraph.ParseFlightID("flightIds", strings.TrimSpace(id))
			if err != nil {
				a.Error(w, r, err)
				return
			}
			f.FlightIDs = append(f.FlightIDs, fid.String())
		}
	case q.Get("departures") != "":
		if f.Departing, err = a.Travel.BoardAirport(r.Context(), "departures", q.Get("departures")); err != nil {
			a.Error(w, r, err)
			return
		}
	case q.Get("arrivals") != "":
		if f.Arriving, err = a.Travel.BoardAirport(r.Context(), "arrivals", q.Get("arrivals")); err != nil {
			a.Error(w, r, err)
			return
		}
	default:
		a.Error(w, r, flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, "flightIds", "give flightIds, departures or arrivals"))
		return
	}
	after := q.Get("after")
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		after = id
	}
	events, err := a.Live.Subscribe(r.Context(), f, after)
	if err != nil {
		a.Error(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", eventStream)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	// A first comment, so that the headers leave at once through any buffering writer.
	w.Write([]byte(": open\n\n"))
	rc.Flush()
	keep := time.NewTicker(eventsKeepAlive)
	defer keep.Stop()
	for {
		select {
		case e, ok := <-events:
			if !ok {
				return
			}
			if e.End != nil {
				fe := flightgraph.Public(r.Context(), a.Log, e.End, "path", r.URL.Path)
				body, _ := json.Marshal(errorBody{Errors: []errorItem{{Code: fe.Code, Name: flightgraph.Lookup(fe.Code).Name, Description: fe.Message, Severity: "ERROR"}}})
				w.Write([]byte("event: error\ndata: " + string(body) + "\n\n"))
				rc.Flush()
				return
			}
			doc := flightEventDoc{Position: e.Cursor(), FlightID: e.FlightID, Kind: string(e.Kind), Status: string(e.Status), Leg: e.Leg,
				DepartureDelay: e.DepartureDelay, ArrivalDelay: e.ArrivalDelay, DepartureGate: e.DepartureGate, DepartureTerminal: e.DepartureTerminal, At: e.At}
			doc.Links.Flight = link{Href: "/opendata/flightstatus/" + strings.ReplaceAll(e.FlightID, "+", "%2B")}
			body, _ := json.Marshal(doc)
			if _, err := w.Write([]byte("id: " + doc.Position + "\nevent: flightStatus\ndata: " + string(body) + "\n\n")); err != nil {
				return
			}
			rc.Flush()
		case <-keep.C:
			if _, err := w.Write([]byte(": keep-alive\n\n")); err != nil {
				return
			}
			rc.Flush()
		case <-r.Context().Done():
			return
		}
	}
}
