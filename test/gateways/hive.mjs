// Hive Gateway in front of flightgraph, forwarding the client's credentials to the subgraph.
//
//   node hive.mjs SUPERGRAPH.graphql PORT [sse|ws|both]
//
// Prints "hive gateway ready on PORT" once it listens (PORT 0 picks a free one). This is the
// runtime the hive-gateway CLI serves; propagateHeaders and transportEntries are the same options
// in a gateway.config.ts.
//
// Subscriptions: clients subscribe to the gateway over server-sent events (POST or GET with
// Accept: text/event-stream), and the gateway subscribes to the subgraph over server-sent events
// too, forwarding the same credentials (propagateHeaders applies to every request to a subgraph,
// subscriptions included). The subgraphs are called as Hive Gateway calls them by default: queries
// and mutations by POST, subscriptions by GET (graphql-sse's distinct connections mode, the
// operation in the query string, Accept: text/event-stream), which flightgraph takes as it takes
// the POST form. With "ws" the gateway subscribes
// to the subgraphs over graphql-transport-ws instead, one connection per client credential, whose
// upgrade request carries the client's api-key and Authorization headers. With "both", one
// process serves the two (it prints "hive gateway ready on PORT ws PORT2").
import { createServer } from 'node:http';
import { createGatewayRuntime } from '@graphql-hive/gateway';

/** The headers that carry flightgraph's credentials: an API key and an OAuth access token. */
const credentials = ['api-key', 'authorization'];

const [supergraph, port = '0', subscriptions = 'sse'] = process.argv.slice(2);

/** gateway returns a Hive Gateway runtime that subscribes to the subgraphs over kind. */
function gateway(kind) {
  const options = {};
  if (kind === 'ws') {
    options.subscriptions = {
      kind: 'ws',
      headers: credentials.map((name) => [name, `{context.headers.${name}}`]),
    };
  }
  return createGatewayRuntime({
    supergraph,
    logging: 'warn',
    transportEntries: { '*': { options } },
    propagateHeaders: {
      fromClientToSubgraphs: ({ request }) =>
        Object.fromEntries(credentials.map((name) => [name, request.headers.get(name)])),
    },
  });
}

/** listen serves a runtime on port and resolves to the port it listens on. */
function listen(runtime, port) {
  const server = createServer(runtime);
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server.address().port)));
}

if (subscriptions === 'both') {
  // Two gateways in one process (the gateway's modules take seconds to load): one subscribing
  // over graphql-sse on PORT, one over graphql-transport-ws on a port of its choosing.
  const [sse, ws] = await Promise.all([listen(gateway('sse'), Number(port)), listen(gateway('ws'), 0)]);
  console.log(`hive gateway ready on ${sse} ws ${ws}`);
} else {
  console.log(`hive gateway ready on ${await listen(gateway(subscriptions), Number(port))}`);
}
