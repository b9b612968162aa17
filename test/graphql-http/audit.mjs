// Runs the graphql-http server audit (GraphQL over HTTP conformance: every MUST, SHOULD and MAY the
// package checks) against a running endpoint, sending the given headers with every request.
//
//   node audit.mjs URL [NAME=VALUE ...]
//
// Prints one line per audit ("ok MUST …", "warn SHOULD …", "error MAY …: reason"), then the tally
// per requirement ("MUST 13/13"), and exits 0 when every audit passed, 1 when any did not, 2 on a
// bad argument.
import { auditServer } from 'graphql-http';

const [url, ...pairs] = process.argv.slice(2);
if (!url) {
  console.error('usage: node audit.mjs URL [NAME=VALUE ...]');
  process.exit(2);
}
const headers = {};
for (const pair of pairs) {
  const eq = pair.indexOf('=');
  if (eq <= 0) {
    console.error(`not NAME=VALUE: ${pair}`);
    process.exit(2);
  }
  headers[pair.slice(0, eq)] = pair.slice(eq + 1);
}

// The audit builds each request itself; the credential is added to it here, without replacing
// any header the audit sets.
const fetchFn = (input, init = {}) => {
  const h = new Headers(init.headers);
  for (const [name, value] of Object.entries(headers)) {
    if (!h.has(name)) h.set(name, value);
  }
  return fetch(input, { ...init, headers: h });
};

const results = await auditServer({ url, fetchFn });
const tally = { MUST: [0, 0], SHOULD: [0, 0], MAY: [0, 0] };
let failed = 0;
for (const r of results) {
  const req = r.name.split(' ')[0];
  tally[req][1]++;
  if (r.status === 'ok') {
    tally[req][0]++;
    console.log(`ok ${r.name}`);
    continue;
  }
  failed++;
  let detail = r.reason;
  if (r.response) {
    let body = '';
    try {
      body = await r.response.text();
    } catch {}
    detail += ` (got ${r.response.status} ${r.response.headers.get('content-type') ?? ''}: ${body.slice(0, 300)})`;
  }
  console.log(`${r.status} ${r.name}: ${detail}`);
}
console.log(Object.entries(tally).map(([req, [ok, all]]) => `${req} ${ok}/${all}`).join(', '));
process.exit(failed ? 1 : 0);
