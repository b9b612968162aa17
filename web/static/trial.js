// Trial keys, for Try it and the playground: the session mints one for a key of the user's
// (POST /portal/trial, web/try.go), kept in this page's memory until a minute before it expires.
//
// One mint at a time per key: the schema fetch and a run that start together share it (a second
// mint would end the first trial key while the first caller still uses it). Its lifetime is
// counted from this page's clock (expiresIn), which need not agree with the server's.
var flightgraphTrial = (function () {
  "use strict";
  var trials = {}; // keyId → { promise, until }
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
    if (t && (t.until === 0 || t.until - Date.now() > 60000)) return t.promise;
    var entry = { until: 0 }; // 0: being minted
    entry.promise = post("/portal/trial", { keyId: keyId }).then(function (k) {
      entry.until = Date.now() + k.expiresIn * 1000;
      return k;
    }, function (err) {
      if (trials[keyId] === entry) delete trials[keyId];
      throw err;
    });
    trials[keyId] = entry;
    return entry.promise;
  }
  return { key: key, post: post };
})();
