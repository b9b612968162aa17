// Trial keys, for Try it and the playground: the session mints one for a key of the user's
// (POST /portal/trial, web/try.go), kept in this page's memory until a minute before it expires.
var flightgraphTrial = (function () {
  "use strict";
  var trials = {};
  // post sends a form from this origin and answers its JSON, or fails with its message and code.
  function post(url, form) {
    return fetch(url, { method: "POST", body: new URLSearchParams(form), credentials: "same-origin" }).then(function (r) {
      return r.json().then(function (j) {
        if (!r.ok) throw new Error((j.message || j.error_description || j.error) + " (" + (j.code || r.status) + ")");
        return j;
      });
    });
  }
  function key(keyId) {
    var t = trials[keyId];
    if (t && Date.parse(t.expiresAt) - Date.now() > 60000) return Promise.resolve(t);
    return post("/portal/trial", { keyId: keyId }).then(function (t) { trials[keyId] = t; return t; });
  }
  return { key: key, post: post };
})();
