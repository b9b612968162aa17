// A browser's GraphQL client against flightgraph's WebSocket: graphql-ws's own client, as a
// front-end team's page runs it, which cannot set a WebSocket's headers and so sends its
// credential in connection_init's payload (connectionParams).
//
//   node graphqlws.mjs URL ORIGIN CONNECTION_PARAMS_JSON QUERY [VARIABLES_JSON]
//
// The socket is opened as a page of ORIGIN opens it (its Origin header, which a browser always
// sends), with no other header. Prints one JSON line per thing the client hears:
// {"connected":true} once the server acknowledged connection_init, {"next":<payload>} per
// result, {"error":<errors>} when the operation fails, {"closed":{"code","reason"}} when the
// server closes the socket, {"complete":true} when the operation ends. The client does not
// retry: every close is reported as the page would see it.
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

const [url, origin, params, query, variables = '{}'] = process.argv.slice(2);

/** PageSocket is a WebSocket as a page of origin opens it: the Origin header and nothing else. */
class PageSocket extends WebSocket {
  constructor(address, protocols) {
    super(address, protocols, { origin });
  }
}

const print = (v) => console.log(JSON.stringify(v));

const client = createClient({
  url: url.replace(/^http/, 'ws'),
  webSocketImpl: PageSocket,
  connectionParams: JSON.parse(params),
  retryAttempts: 0,
  lazy: true,
  on: {
    connected: () => print({ connected: true }),
    closed: (event) => print({ closed: { code: event.code, reason: event.reason } }),
  },
});

client.subscribe(
  { query, variables: JSON.parse(variables) },
  {
    next: (payload) => print({ next: payload }),
    error: (err) => {
      // A GraphQL error list, or the CloseEvent that ended the socket (printed by closed).
      if (Array.isArray(err)) print({ error: err });
      client.dispose();
    },
    complete: () => {
      print({ complete: true });
      client.dispose();
    },
  },
);
