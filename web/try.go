package web

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/flightgraph/flightgraph"
)

// The API catalogue, and Try it: the spec's interactive page, whose forms the browser builds
// from /openapi.json (try.js), calling the APIs with a trial key of one of the user's own keys.

func (p *Portal) catalogue(w http.ResponseWriter, r *http.Request) {
	me, err := p.me(r)
	if err != nil {
		p.fail(w, r, "message", page{Title: "APIs"}, err)
		return
	}
	var d catalogueData
	if err := p.call(r, `{ apis { slug name description auth visibility grants operations plans { name perSecond perDay } }
  apisOnRequest { slug name visibility role } }`, nil, &d); err != nil {
		p.fail(w, r, "message", page{Title: "APIs", Me: me}, err)
		return
	}
	p.render(w, r, http.StatusOK, "apis", page{Title: "APIs", Me: me, Data: &d, Notice: notice(r)})
}

// catalogueData is what the catalogue shows: the APIs the caller may use, and the partner and
// internal ones it may ask the operators for ("on request").
type catalogueData struct {
	APIs          []api
	APIsOnRequest []struct{ Slug, Name, Visibility, Role string }
}

// requestAccess sends the operators a request for a partner or internal API, then shows the
// catalogue again with a notice (or the form's problem).
func (p *Portal) requestAccess(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	p.mutate(w, r, `mutation($in: ApiAccessInput!) { requestApiAccess(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"api": f.Get("api"), "description": f.Get("description"), "expectedUse": f.Get("expectedUse"),
			"requestToken": requestToken(f)}}, "/portal/apis", "asked", p.catalogueAgain)
}

// catalogueAgain shows the catalogue with a refused request's problem and what was typed.
func (p *Portal) catalogueAgain(w http.ResponseWriter, r *http.Request, pg page) {
	me, err := p.me(r)
	if err != nil || me == nil {
		p.fail(w, r, "message", page{Title: "APIs"}, pg.Problem)
		return
	}
	var d catalogueData
	if err := p.call(r, `{ apis { slug name description auth visibility grants operations plans { name perSecond perDay } }
  apisOnRequest { slug name visibility role } }`, nil, &d); err != nil {
		p.fail(w, r, "message", page{Title: "APIs", Me: me}, err)
		return
	}
	pg.Title, pg.Me, pg.Data = "APIs", me, &d
	p.render(w, r, pg.status(), "apis", pg)
}

// tryKey is a key as Try it offers it: with the APIs it is approved for.
type tryKey struct {
	ID          string   `json:"id"`
	Label       string   `json:"label"`
	Application string   `json:"application"`
	APIs        []string `json:"apis"`
}

type tryData struct {
	APIs []api
	Keys []tryKey
	// Raw is what try.js reads, as JSON: the APIs and the keys.
	Raw any
}

const usableQuery = `{
  me { ` + meFields + ` applications { name keys { id apiKey status subscriptions { api status } } } }
  apis { slug name auth grants }
}`

// usable reads the signed-in account, the user's active keys with the APIs each is approved for, and the APIs some
// key of theirs is approved for (the user's plans cover), for Try it and the playground.
func (p *Portal) usable(r *http.Request) (*account, []tryKey, []api, error) {
	var d struct {
		Me struct {
			Account      account
			Applications []application
		}
		APIs []api
	}
	if err := p.call(r, usableQuery, nil, &d); err != nil {
		return nil, nil, nil, err
	}
	var keys []tryKey
	approved := map[string]bool{}
	for _, a := range d.Me.Applications {
		for _, k := range a.Keys {
			if k.Status != "active" {
				continue
			}
			tk := tryKey{ID: k.ID, Label: a.Name + " — " + k.APIKey, Application: a.Name}
			for _, s := range k.Subscriptions {
				if s.Status == "approved" {
					tk.APIs = append(tk.APIs, s.API)
					approved[s.API] = true
				}
			}
			if len(tk.APIs) > 0 {
				keys = append(keys, tk)
			}
		}
	}
	var apis []api
	for _, a := range d.APIs {
		if approved[a.Slug] {
			apis = append(apis, a)
		}
	}
	return &d.Me.Account, keys, apis, nil
}

func (p *Portal) tryIt(w http.ResponseWriter, r *http.Request) {
	me, keys, apis, err := p.usable(r)
	if err != nil {
		p.fail(w, r, "message", page{Title: "Try it"}, err)
		return
	}
	type tryAPI struct {
		Slug   string   `json:"slug"`
		Name   string   `json:"name"`
		Auth   string   `json:"auth"`
		Grants []string `json:"grants"`
	}
	list := []tryAPI{}
	for _, a := range apis {
		list = append(list, tryAPI{a.Slug, a.Name, a.Auth, a.Grants})
	}
	data := &tryData{APIs: apis, Keys: keys, Raw: map[string]any{"apis": list, "keys": keys}}
	p.render(w, r, http.StatusOK, "try", page{Title: "Try it", Me: me, Data: data})
}

// keys answers the session's usable keys as JSON, for the playground's key picker:
// {"signedIn": false} without a live session.
func (p *Portal) keys(w http.ResponseWriter, r *http.Request) {
	if p.session(r) == "" {
		writeJSON(w, http.StatusOK, map[string]any{"signedIn": false})
		return
	}
	_, keys, _, err := p.usable(r)
	if pr, ok := err.(*Problem); ok && pr.Code == flightgraph.ECodeNotSignedIn {
		writeJSON(w, http.StatusOK, map[string]any{"signedIn": false})
		return
	} else if err != nil {
		pr := problemOf(err)
		writeJSON(w, pr.status(), map[string]string{"code": pr.Code, "message": pr.Message})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"signedIn": true, "keys": keys})
}

// trialKey mints a trial key of one of the user's keys for Try it and the playground, and
// answers it as JSON: {apiKey, secret, expiresAt, expiresIn}, expiresIn being the seconds it has
// left by the server's clock, which a page counts from its own clock (that may be off). It is a
// POST from this origin with the session's cookie (CrossOriginProtection refuses any other),
// never cached.
func (p *Portal) trialKey(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	var d struct {
		TryKey struct {
			APIKey    string `json:"apiKey"`
			Secret    string `json:"secret"`
			ExpiresAt string `json:"expiresAt"`
		}
	}
	if p.session(r) == "" {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"code": flightgraph.ECodeNotSignedIn, "message": "sign in to the portal first"})
		return
	}
	err := p.call(r, `mutation($id: ID!) { tryKey(keyId: $id) { apiKey secret expiresAt } }`, map[string]any{"id": f.Get("keyId")}, &d)
	if err != nil {
		pr := problemOf(err)
		if pr.Code == flightgraph.ECodeInternal {
			p.Log.ErrorContext(r.Context(), "trial key", "err", err)
		}
		writeJSON(w, pr.status(), map[string]string{"code": pr.Code, "message": pr.Message})
		return
	}
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	expiresIn := 0
	if at, err := time.Parse(time.RFC3339, d.TryKey.ExpiresAt); err == nil {
		expiresIn = max(int(at.Sub(now()).Seconds()), 0)
	}
	writeJSON(w, http.StatusOK, map[string]any{"apiKey": d.TryKey.APIKey, "secret": d.TryKey.Secret, "expiresAt": d.TryKey.ExpiresAt, "expiresIn": expiresIn})
}

// writeJSON answers v as JSON, never cached: these answers are the session's own.
func writeJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	secure(h)
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
