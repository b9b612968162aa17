// The ground operations subgraph (ground.graphql), a second team's subgraph beside flightgraph's
// in server/gateways_federation_test.go.
//
//   node ground.mjs PORT
//
// Prints "ground subgraph ready on PORT" once it listens (PORT 0 picks a free one). Every answer
// is made up from the entity's key, so a test can compute what it expects.
import { readFileSync } from 'node:fs';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { startStandaloneServer } from '@apollo/server/standalone';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { GraphQLError, parse } from 'graphql';

/** hash is a small, stable hash of a key (FNV-1a, 32 bits). */
export function hash(key) {
  let h = 0x811c9dc5;
  for (const c of key) {
    h ^= c.codePointAt(0);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

const alliances = ['SkyTeam', 'Star Alliance', 'oneworld', null];

const turnaround = ({ id }) => ({ stand: `D${(hash(id) % 80) + 1}`, minutesOnGround: 35 + (hash(id) % 60) });

const resolvers = {
  Query: {
    groundDelays(_, { flightIds }) {
      if (flightIds.length === 0) {
        throw new GraphQLError('Name at least one flight.', { extensions: { code: 'GROUND_400.000' } });
      }
      return flightIds.map((id) => ({
        minutes: hash(id) % 45,
        reason: ['BAGGAGE', 'FUEL', 'CATERING'][hash(id) % 3],
        flight: { id },
      }));
    },
  },
  Flight: {
    __resolveReference: ({ id }) => ({ id }),
    turnaround,
  },
  Airport: {
    __resolveReference: ({ code }) => ({ code }),
    weather: ({ code }) => ({ windKnots: hash(code) % 30, visibilityMeters: 1000 * (1 + (hash(code) % 10)) }),
  },
  Carrier: {
    __resolveReference: ({ code }) => ({ code }),
    alliance: ({ code }) => alliances[hash(code) % alliances.length],
  },
  Aircraft: {
    __resolveReference: ({ registration }) => ({ registration }),
    lastCheck: ({ registration }) => `2026-10-${String((hash(registration) % 28) + 1).padStart(2, '0')}`,
  },
};

const [port = '0'] = process.argv.slice(2);
const typeDefs = parse(readFileSync(new URL('./ground.graphql', import.meta.url), 'utf8'));
const server = new ApolloServer({
  schema: buildSubgraphSchema({ typeDefs, resolvers }),
  includeStacktraceInErrorResponses: false,
  plugins: [ApolloServerPluginInlineTraceDisabled()],
});
const { url } = await startStandaloneServer(server, { listen: { host: '127.0.0.1', port: Number(port) } });
console.log(`ground subgraph ready on ${new URL(url).port}`);
