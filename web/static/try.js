// Try it: pick an API, one of your keys and an operation; the forms come from /openapi.json, and
// the call goes out with a trial key that your session mints for the key (POST /portal/trial).
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("try-data").textContent);
  var $ = function (id) { return document.getElementById(id); };
  var apiSel = $("try-api"), keySel = $("try-key"), opSel = $("try-op"), params = $("try-params");
  var spec = null, ops = [];

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text != null) e.textContent = text;
    return e;
  }
  function state(msg) { $("try-state").textContent = msg; }
  function api() { return data.apis.filter(function (a) { return a.slug === apiSel.value; })[0]; }

  var trial = flightgraphTrial.key; // trial.js

  function resolve(o) {
    while (o && o.$ref) {
      o = o.$ref.replace(/^#\//, "").split("/").reduce(function (acc, p) { return acc && acc[p]; }, spec);
    }
    return o || {};
  }

  function fillKeys() {
    keySel.textContent = "";
    data.keys.forEach(function (k) {
      if (k.apis.indexOf(apiSel.value) >= 0) keySel.appendChild(el("option", { value: k.id }, k.label));
    });
  }

  function loadSpec() {
    state("Reading the API description…");
    return trial(keySel.value).then(function (t) {
      return fetch("/openapi.json", { headers: { "api-key": t.apiKey } });
    }).then(function (r) {
      if (!r.ok) throw new Error("/openapi.json answered " + r.status);
      return r.json();
    }).then(function (s) { spec = s; state(""); });
  }

  function fillOps() {
    ops = [];
    opSel.textContent = "";
    Object.keys(spec.paths).forEach(function (path) {
      Object.keys(spec.paths[path]).forEach(function (method) {
        var op = spec.paths[path][method];
        if (op["x-flightgraph-product"] !== apiSel.value) return;
        ops.push({ path: path, method: method.toUpperCase(), op: op });
      });
    });
    ops.forEach(function (o, i) { opSel.appendChild(el("option", { value: i }, o.method + " " + o.path)); });
    fillParams();
  }

  // initial is a parameter's first value: the document's example, which the server makes for a
  // call that succeeds (its dates by the server's clock, not this page's, which may be another
  // day), else the schema's example or default; empty otherwise, so that a parameter the example
  // call leaves out is not sent.
  function initial(p, schema) {
    var v = p.example != null ? p.example : schema.example != null ? schema.example : schema.default;
    return v != null ? String(v) : "";
  }

  function fillParams() {
    var o = ops[opSel.value];
    params.querySelectorAll(".param").forEach(function (n) { n.remove(); });
    $("try-op-summary").textContent = o ? o.op.summary || "" : "";
    if (!o) return;
    (o.op.parameters || []).forEach(function (raw, i) {
      var p = resolve(raw), schema = resolve(p.schema), id = "try-p-" + i;
      var row = el("div", { class: "param" });
      var label = el("label", { for: id }, p.name + " (" + p.in + ")" + (p.required ? " *" : ""));
      var input;
      if (schema.enum) {
        input = el("select", { id: id });
        if (!p.required) input.appendChild(el("option", { value: "" }, "—"));
        schema.enum.forEach(function (v) { if (v !== "") input.appendChild(el("option", { value: v }, v)); });
        input.value = initial(p, schema);
      } else {
        input = el("input", { id: id });
        input.value = initial(p, schema);
      }
      input.dataset.name = p.name;
      input.dataset.in = p.in;
      if (p.required) input.required = true;
      row.appendChild(label);
      row.appendChild(input);
      if (p.description) {
        var hint = el("p", { class: "hint", id: id + "-hint" }, p.description);
        input.setAttribute("aria-describedby", id + "-hint");
        row.appendChild(hint);
      }
      params.appendChild(row);
    });
    var rb = o.op.requestBody && o.op.requestBody.content && o.op.requestBody.content["application/json"];
    $("try-body-row").hidden = !rb;
    $("try-body").value = rb ? JSON.stringify(rb.example || sample(rb.schema, 0), null, 2) : "";
  }

  // A body to start from when the document gives no example (it gives one for every operation):
  // the schema's required properties, each its example, default or first choice; dates a week
  // ahead by this page's clock.
  function sample(raw, depth) {
    var sc = resolve(raw);
    if (sc.example != null) return sc.example;
    if (sc.default != null) return sc.default;
    if (sc.enum) return sc.enum[0];
    if (depth > 6) return null;
    switch (sc.type) {
      case "object":
        var o = {};
        (sc.required || []).forEach(function (k) { o[k] = sample((sc.properties || {})[k], depth + 1); });
        return o;
      case "array": return [sample(sc.items, depth + 1)];
      case "integer": case "number": return sc.minimum != null ? sc.minimum : 1;
      case "boolean": return false;
      case "string":
        if (sc.format === "date") return new Date(Date.now() + 7 * 86400000).toISOString().slice(0, 10);
        if (sc.format === "date-time") return new Date().toISOString().slice(0, 19) + "Z";
        return "";
    }
    return null;
  }

  function quote(s) { return "'" + String(s).replace(/'/g, "'\\''") + "'"; }

  function show(id, text) { $(id).textContent = text; }

  function headersText(h) {
    var out = [];
    h.forEach(function (v, k) { out.push(k + ": " + v); });
    return out.sort().join("\n");
  }

  function token(t) {
    var form = new URLSearchParams({ grant_type: "client_credentials", client_id: t.apiKey, client_secret: t.secret, scope: apiSel.value });
    $("try-token-step").hidden = false;
    show("try-token-request", "POST /oauthcust/oauth/token\ncontent-type: application/x-www-form-urlencoded\n\n" +
      form.toString().replace(/client_secret=[^&]+/, "client_secret=…"));
    return fetch("/oauthcust/oauth/token", { method: "POST", body: form }).then(function (r) {
      return r.json().then(function (j) {
        var shown = Object.assign({}, j);
        if (shown.access_token) shown.access_token = shown.access_token.slice(0, 12) + "…";
        show("try-token-response", r.status + "\n" + JSON.stringify(shown, null, 2));
        if (!r.ok) throw new Error("the token endpoint refused: " + (j.error_description || j.error));
        return j.access_token;
      });
    });
  }

  function send(ev) {
    ev.preventDefault();
    var o = ops[opSel.value], a = api();
    if (!o) return;
    var path = o.path, query = new URLSearchParams(), headers = {};
    var missing = [];
    params.querySelectorAll("[data-name]").forEach(function (input) {
      var v = input.value.trim();
      if (!v) { if (input.required) missing.push(input.dataset.name); return; }
      if (input.dataset.in === "path") path = path.replace("{" + input.dataset.name + "}", encodeURIComponent(v));
      else if (input.dataset.in === "query") query.append(input.dataset.name, v);
      else if (input.dataset.in === "header") headers[input.dataset.name] = v;
    });
    if (missing.length) { state("Fill in: " + missing.join(", ")); return; }
    var url = path + (query.toString() ? "?" + query : "");
    var body = $("try-body-row").hidden ? null : $("try-body").value;
    if (body != null) headers["content-type"] = "application/json";
    $("try-out").hidden = false;
    $("try-token-step").hidden = true;
    $("try-request-title").textContent = a.auth === "OAUTH" ? "2. The request" : "The request";
    state("Calling…");
    trial(keySel.value).then(function (t) {
      return (a.auth === "OAUTH" ? token(t) : Promise.resolve(null)).then(function (access) {
        var shownAuth = {};
        if (access) { headers.authorization = "Bearer " + access; shownAuth.authorization = "Bearer " + access.slice(0, 12) + "…"; }
        else { headers["api-key"] = t.apiKey; shownAuth["api-key"] = t.apiKey; }
        var shown = Object.assign({}, headers, shownAuth);
        show("try-request", o.method + " " + url + "\n" + Object.keys(shown).map(function (k) { return k + ": " + shown[k]; }).join("\n") + (body ? "\n\n" + body : ""));
        var curl = ["curl -si " + quote(location.origin + url)];
        if (o.method !== "GET") curl.push("-X " + o.method);
        Object.keys(headers).forEach(function (k) {
          curl.push("-H " + quote(k + ": " + (k === "authorization" ? "Bearer $TOKEN" : headers[k])));
        });
        if (body) curl.push("--data " + quote(body));
        show("try-curl", curl.join(" \\\n  ") + (access ? "\n# $TOKEN: the access token of step 1" : "\n# the trial key works until " + t.expiresAt + "; then use your own key"));
        // Each try is a call, answered now: never a copy the browser kept (Cache-Control).
        return fetch(url, { method: o.method, headers: headers, body: body, cache: "no-store" });
      });
    }).then(function (r) {
      show("try-status", r.status + " " + r.statusText);
      show("try-headers", headersText(r.headers));
      if (r.ok && /^text\/event-stream/.test(r.headers.get("Content-Type") || "")) return stream(r);
      return r.text().then(function (text) {
        try { text = JSON.stringify(JSON.parse(text), null, 2); } catch (e) { /* not JSON: as it came */ }
        show("try-response", text);
        state("Done: " + r.status + ".");
      });
    }).catch(function (err) { state("The call failed: " + err.message); });
  }

  // stream shows what a stream of events (server-sent events) sends in its first few seconds,
  // then leaves it: a stream does not end, and a page that follows it belongs to EventSource.
  function stream(r) {
    var reader = r.body.getReader(), decoder = new TextDecoder(), text = "";
    var stop = setTimeout(function () { reader.cancel(); }, STREAM_SECONDS * 1000);
    show("try-response", "");
    state("A stream: reading its first " + STREAM_SECONDS + " s…");
    function next() {
      return reader.read().then(function (part) {
        if (part.done) {
          clearTimeout(stop);
          state("Done: " + r.status + ". A stream of events: here its first " + STREAM_SECONDS + " s; follow it with EventSource or curl -N.");
          return;
        }
        text += decoder.decode(part.value, { stream: true });
        show("try-response", text);
        return next();
      });
    }
    return next();
  }
  var STREAM_SECONDS = 3;

  apiSel.addEventListener("change", function () { fillKeys(); loadSpec().then(fillOps).catch(function (e) { state(e.message); }); });
  keySel.addEventListener("change", function () { fillOps(); });
  opSel.addEventListener("change", fillParams);
  $("try").addEventListener("submit", send);
  fillKeys();
  loadSpec().then(fillOps).catch(function (e) { state("Could not read the API description: " + e.message); });
})();
