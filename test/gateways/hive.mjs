// Hive Gateway in front of flightgraph, forwarding the client's credentials to the subgraph.
//
//   node hive.mjs SUPERGRAPH.graphql PORT
//
// Prints "hive gateway ready on PORT" once it listens (PORT 0 picks a free one). This is the
// runtime the hive-gateway CLI serves; propagateHeaders is the same option in a gateway.config.ts.
import { createServer } from 'node:http';
import { createGatewayRuntime } from '@graphql-hive/gateway';

/** The headers that carry flightgraph's credentials: an API key and an OAuth access token. */
const credentials = ['api-key', 'authorization'];

const [supergraph, port = '0'] = process.argv.slice(2);
const gateway = createGatewayRuntime({
  supergraph,
  logging: 'warn',
  propagateHeaders: {
    fromClientToSubgraphs: ({ request }) =>
      Object.fromEntries(credentials.map((name) => [name, request.headers.get(name)])),
  },
});
const server = createServer(gateway);
server.listen(Number(port), '127.0.0.1', () => {
  console.log(`hive gateway ready on ${server.address().port}`);
});
