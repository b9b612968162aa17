// The playground: GraphiQL over this server's /graphql (or, at /portal/playground, the portal's
// /portal/graphql), with example operations. Signed in to the portal, the user picks one of their
// keys and the calls go out with a trial key that the session mints for it (POST /portal/trial):
// no secret is pasted. Served from this origin with everything it loads (see web.go).
//
// /graphql answers introspection only to a credential (and each caller sees the schema it may
// use), so GraphiQL fetches the schema only once the page has one: signed in, when the key list
// has loaded and a key is picked, and again when another key or way of calling is picked; signed
// out, when the Headers tab holds an api-key or an Authorization, and again (debounced) whenever
// the Headers change. Until then the docs wait ("No GraphQL schema available"), never fail.
(function () {
  "use strict";
  var portal = location.pathname === "/portal/playground";
  var vars = {
    departures: function (d) { return { date: d, first: 10 } },
    board: function (d) { return { date: d, first: 10, destinations: ["JFK", "LHR", "CDG"] } },
    offers: function (d) { return { date: d } },
    signin: function () { return { email: "", password: "" } },
    register: function () { return { input: { name: "My app", description: "What it does", website: "https://example.com" } } },
  };
  var examples = Array.prototype.map.call(document.getElementById(portal ? "portal-examples" : "examples").content.querySelectorAll("[data-example]"), function (ex) {
    var date = new Date(Date.now() + Number(ex.dataset.days || 0) * 86400000).toISOString().slice(0, 10);
    var v = vars[ex.dataset.example];
    return { query: ex.textContent.trim(), variables: v ? JSON.stringify(v(date), null, 2) : undefined };
  });
  var base = GraphiQL.createFetcher({ url: portal ? "/portal/graphql" : "/graphql" });
  var keySel = document.getElementById("key"), authSel = document.getElementById("auth"), keyState = document.getElementById("keystate");
  var tokens = {};

  var trial = flightgraphTrial.key, post = flightgraphTrial.post; // trial.js
  // The headers of the picked key: its trial key, an access token got with it, or both (one
  // operation may call API-key and OAuth APIs with the two of one application).
  function keyHeaders() {
    if (portal || !keySel.value) return Promise.resolve({});
    var keyId = keySel.value, how = authSel.value;
    return trial(keyId).then(function (t) {
      if (how === "api-key") return { "api-key": t.apiKey };
      var withKey = function (h) { if (how === "both") h["api-key"] = t.apiKey; return h; };
      var tok = tokens[keyId];
      if (tok && tok.until - Date.now() > 60000 && tok.trial === t.apiKey) return withKey({ authorization: "Bearer " + tok.value });
      return post("/oauthcust/oauth/token", { grant_type: "client_credentials", client_id: t.apiKey, client_secret: t.secret }).then(function (j) {
        tokens[keyId] = { value: j.access_token, until: Date.now() + j.expires_in * 1000, trial: t.apiKey };
        return withKey({ authorization: "Bearer " + j.access_token });
      });
    });
  }
  function fetcher(params, opts) {
    return keyHeaders().then(function (h) {
      return base(params, Object.assign({}, opts, { headers: Object.assign(h, (opts && opts.headers) || {}) }));
    }, function (err) {
      return { errors: [{ message: "No trial key for the picked key: " + err.message }] };
    });
  }

  // The schema is fetched when GraphiQL gets a fetcher it has not seen (its schema context
  // introspects again on a new fetcher), with the Headers tab's headers; schema null holds it off.
  var root = ReactDOM.createRoot(document.getElementById("graphiql"));
  var canIntrospect = portal, headers = "", fetchedWith = null, debounce = 0;
  function credential() {
    if (portal || keySel.value) return true;
    try {
      var h = JSON.parse(headers || "{}");
      return Object.keys(h).some(function (k) { return /^(api-key|authorization)$/i.test(k) && String(h[k]).trim() !== ""; });
    } catch (e) {
      return false; // half typed: wait for the rest
    }
  }
  // refetch renders GraphiQL with a new fetcher, and so fetches the schema, when the page has a
  // credential; without one it leaves the docs as they are (waiting, or the last schema fetched).
  function refetch() {
    if (!credential()) return;
    canIntrospect = true;
    fetchedWith = headers;
    render(function (params, opts) { return fetcher(params, opts); });
  }
  function headersEdited(value) {
    headers = value;
    clearTimeout(debounce);
    debounce = setTimeout(function () { if (headers !== fetchedWith) refetch(); }, 500);
  }

  if (portal) {
    keyState.textContent = "The portal's API: sign in with the first tab, then send its token in the Headers tab.";
  } else {
    [keySel, authSel].forEach(function (n) { n.addEventListener("change", refetch); });
    fetch("/portal/keys.json", { credentials: "same-origin" }).then(function (r) { return r.json(); }).then(function (j) {
      if (!j.signedIn) return;
      if (!j.keys || !j.keys.length) {
        keyState.textContent = "None of your keys is approved for an API yet: see My Account.";
        return;
      }
      j.keys.forEach(function (k) {
        var o = document.createElement("option");
        o.value = k.id;
        o.textContent = k.label + " (" + k.apis.join(", ") + ")";
        keySel.appendChild(o);
      });
      keyState.textContent = "Calls go out with a 15-minute trial key of your key:";
      [keySel, authSel].forEach(function (n) { n.hidden = false; n.previousElementSibling.hidden = false; });
      refetch();
    }).catch(function () { /* the page works without: the Headers tab */ });
  }

  // The playground keeps its tabs in localStorage (GraphiQL's storage). The portal's keeps them in
  // this page's memory only: its tabs hold a password (signIn's variables) and session tokens,
  // which must not outlive the page, nor be left for any script of this origin to read.
  var memory = {};
  if (portal) {
    // What an earlier version left there ("portal:" keys) goes.
    Object.keys(localStorage).forEach(function (k) { if (k.indexOf("portal:") === 0) localStorage.removeItem(k); });
  }
  var storage = portal ? {
    getItem: function (k) { return Object.prototype.hasOwnProperty.call(memory, k) ? memory[k] : null; },
    setItem: function (k, v) { memory[k] = String(v); },
    removeItem: function (k) { delete memory[k]; },
    clear: function () { memory = {}; },
    get length() { return Object.keys(memory).length; },
  } : {
    getItem: function (k) { return localStorage.getItem(k); },
    setItem: function (k, v) { localStorage.setItem(k, v); },
    removeItem: function (k) { localStorage.removeItem(k); },
    clear: function () {},
    get length() { return localStorage.length; },
  };

  function render(f) {
    root.render(
      React.createElement(GraphiQL, {
        fetcher: f,
        schema: canIntrospect ? undefined : null,
        onEditHeaders: portal ? undefined : headersEdited,
        defaultQuery: examples[0].query,
        variables: examples[0].variables,
        storage: storage,
        defaultEditorToolsVisibility: true,
        shouldPersistHeaders: false,
        defaultTabs: examples,
      })
    );
  }
  render(fetcher);
})();
