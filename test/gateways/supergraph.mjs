// Composes subgraphs into a supergraph with Apollo's composer and prints the supergraph's SDL,
// for the gateways to load.
//
//   node supergraph.mjs NAME URL FILE.graphql [NAME URL FILE.graphql ...] > supergraph.graphql
//
// URL is where the gateways will call the subgraph. Exits 1 with each error's code and message
// when the subgraphs do not compose, and 2 on a bad argument or an unreadable or unparsable file.
//
// @apollo/composition is pinned at @apollo/gateway's own version, not test/compose's 2.9.3: a
// second copy of @apollo/federation-internals beside the gateway's breaks its query planner
// ("Cannot read properties of undefined (reading 'kind')" on every operation).
import { readFileSync } from 'node:fs';
import { composeServices } from '@apollo/composition';
import { parse } from 'graphql';

const args = process.argv.slice(2);
if (args.length === 0 || args.length % 3 !== 0) {
  console.error('usage: node supergraph.mjs NAME URL FILE.graphql [NAME URL FILE.graphql ...]');
  process.exit(2);
}
const services = [];
for (let i = 0; i < args.length; i += 3) {
  const [name, url, file] = args.slice(i, i + 3);
  try {
    services.push({ name, url, typeDefs: parse(readFileSync(file, 'utf8')) });
  } catch (err) {
    console.error(`${name} (${file}): ${err.message}`);
    process.exit(2);
  }
}
const result = composeServices(services);
if (result.errors) {
  for (const err of result.errors) {
    console.error(`${err.extensions?.code ?? 'ERROR'}: ${err.message}`);
  }
  process.exit(1);
}
process.stdout.write(result.supergraphSdl);
