// PostGraphile 5 over flightgraph's PostgreSQL tables (flightgraph migrate + seed), the other
// server of bench/'s Departures comparison: bench.StartPostGraphile runs it with the Node 22 this
// package installs, DATABASE_URL and PORT (0 for a free one), and reads the address it prints.
// Its pool holds 10 connections, as the harness's flightgraph servers do (FLIGHTGRAPH_DB_MAX_CONNS).
//
// flight_legs names its airports and aircraft without foreign keys (the legs are materialised
// from the schedule); the smart tags below give PostGraphile those relations, so that it answers
// the same nesting as flightgraph's board: flight, legs, places with city and country, aircraft,
// cabins, amenities.
import { createServer } from "node:http";
import { postgraphile } from "postgraphile";
import { PostGraphileAmberPreset } from "postgraphile/presets/amber";
import { makePgService } from "postgraphile/adaptors/pg";
import { grafserv } from "postgraphile/grafserv/node";
import { makeJSONPgSmartTagsPlugin } from "postgraphile/utils";

if (!process.env.DATABASE_URL) {
  console.error("DATABASE_URL is not set");
  process.exit(2);
}
// flightgraph's tables are in the schema the URL's search_path names (storetest.DSN's), or in
// public; node-postgres does not read that parameter, so it is taken off.
const url = new URL(process.env.DATABASE_URL);
const schema = url.searchParams.get("search_path") ?? "public";
url.searchParams.delete("search_path");
const port = Number(process.env.PORT ?? 0);

const Relations = makeJSONPgSmartTagsPlugin({
  version: 1,
  config: {
    class: {
      flight_legs: {
        tags: {
          foreignKey: [
            "(origin) references airports (code)|@fieldName originAirport",
            "(destination) references airports (code)|@fieldName destinationAirport",
            "(configuration) references aircraft (code)|@fieldName aircraft",
          ],
        },
      },
      // The access tables' "subscriptions" would name a type Subscription, which GraphQL's
      // subscription root already is; the board reads none of them.
      subscriptions: { tags: { name: "plan_subscriptions" } },
    },
  },
});

const pgl = postgraphile({
  extends: [PostGraphileAmberPreset],
  plugins: [Relations],
  pgServices: [makePgService({ connectionString: url.toString(), schemas: [schema], poolConfig: { max: 10 } })],
  grafserv: { graphqlPath: "/graphql", graphiql: false },
});
const server = createServer();
await pgl.createServ(grafserv).addTo(server);
server.listen(port, "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
process.on("SIGINT", () => server.close(() => pgl.release().then(() => process.exit(0))));
