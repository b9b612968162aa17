// Composes subgraphs into a supergraph with Apollo's composer, as a company's router build would.
//
//   node compose.mjs [--supergraph=OUT.graphql] NAME=FILE.graphql [NAME=FILE.graphql ...]
//
// Prints the supergraph's root fields (for example "Query: airport flights me") and each of the
// composer's hints ("HINT CODE: message"), writes the supergraph's SDL to OUT.graphql when asked,
// and exits 0 when the subgraphs compose; prints each error's code and message and exits 1 when
// they do not; exits 2 on a bad argument or an unreadable or unparsable file.
import { readFileSync, writeFileSync } from 'node:fs';
import { composeServices } from '@apollo/composition';
import { parse } from 'graphql';

let supergraphOut = '';
const args = process.argv.slice(2).filter((arg) => {
  if (arg.startsWith('--supergraph=')) {
    supergraphOut = arg.slice('--supergraph='.length);
    return false;
  }
  return true;
});
if (args.length === 0) {
  console.error('usage: node compose.mjs NAME=FILE.graphql [NAME=FILE.graphql ...]');
  process.exit(2);
}
const services = [];
for (const arg of args) {
  const eq = arg.indexOf('=');
  if (eq <= 0 || eq === arg.length - 1) {
    console.error(`not NAME=FILE: ${arg}`);
    process.exit(2);
  }
  const name = arg.slice(0, eq);
  const file = arg.slice(eq + 1);
  try {
    // The URL is only written into the supergraph for a router to call: nothing calls it here.
    services.push({ name, url: `http://${name}.invalid/graphql`, typeDefs: parse(readFileSync(file, 'utf8')) });
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
for (const hint of result.hints ?? []) {
  console.log(`HINT ${hint.definition?.code ?? '?'}: ${hint.message}`);
}
if (supergraphOut) {
  writeFileSync(supergraphOut, result.supergraphSdl);
}
for (const kind of ['query', 'mutation', 'subscription']) {
  const root = result.schema.schemaDefinition.rootType(kind);
  if (root) {
    console.log(`${root.name}: ${root.fields().map((f) => f.name).join(' ')}`);
  }
}
