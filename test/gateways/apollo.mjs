// Apollo Gateway in front of flightgraph, with the data source platform teams need.
//
//   node apollo.mjs SUPERGRAPH.graphql PORT
//
// Prints "apollo gateway ready on PORT" once it listens (PORT 0 picks a free one).
//
// flightgraph refuses a call it does not admit with HTTP 401, 403 or 429 and a GraphQL body whose
// errors carry extensions.code ("AUTH_401.000", "LIMIT_429.000", ...) and, for limits,
// extensions.retryAfter in seconds. Apollo Gateway's RemoteGraphQLDataSource turns any non-2xx
// answer into an opaque "429: Too Many Requests" with the body under extensions.response.body, so
// this data source overrides errorFromResponse to surface the subgraph's own first error, and
// forwards the client's credentials, which the gateway does not do on its own.
import { readFileSync } from 'node:fs';
import { ApolloGateway, RemoteGraphQLDataSource } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { GraphQLError } from 'graphql';

/** The headers that carry flightgraph's credentials: an API key and an OAuth access token. */
const credentials = ['api-key', 'authorization'];

class FlightgraphDataSource extends RemoteGraphQLDataSource {
  willSendRequest({ request, context }) {
    for (const name of credentials) {
      const value = context.headers?.[name];
      if (value) request.http.headers.set(name, value);
    }
  }

  async errorFromResponse(response) {
    const error = await super.errorFromResponse(response);
    const first = error.extensions.response?.body?.errors?.[0];
    if (!first?.extensions?.code) return error;
    // The subgraph's message and extensions (code, retryAfter, ...), and its HTTP status.
    return new GraphQLError(first.message, {
      extensions: { ...first.extensions, status: response.status },
    });
  }
}

const [supergraph, port = '0'] = process.argv.slice(2);
const gateway = new ApolloGateway({
  supergraphSdl: readFileSync(supergraph, 'utf8'),
  buildService: ({ url }) => new FlightgraphDataSource({ url }),
});
const server = new ApolloServer({ gateway, includeStacktraceInErrorResponses: false });
const { url } = await startStandaloneServer(server, {
  listen: { host: '127.0.0.1', port: Number(port) },
  context: async ({ req }) => ({ headers: req.headers }),
});
console.log(`apollo gateway ready on ${new URL(url).port}`);
