// Validates instances with ajv, a validator independent of the Go one.
//
// Usage: node validate.mjs CASES.json
// CASES.json is an array of {"name", "canonical", "lowered", "pairs"},
// each pair [x, u]: x an argument object as the provider sends it under
// the lowered schema, u the same after the lowering is undone. It prints
// an array of {"name", "canonical": [ajv's verdict on each u under the
// canonical schema], "lowered": [on each x under the lowered schema]}.
//
// A schema declaring draft-07 is compiled by ajv's draft-07 class, any
// other by its 2020-12 class: one instance of ajv does not do both.
// Formats are asserted (ajv-formats, full mode), as the Go validator
// asserts them, and patterns are Unicode regular expressions.
import { readFileSync } from 'node:fs';
import Ajv07 from 'ajv';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const options = { strict: false, allErrors: false, validateFormats: true, unicodeRegExp: true };
const draft07 = addFormats(new Ajv07(options), { mode: 'full' });
const draft2020 = addFormats(new Ajv2020(options), { mode: 'full' });

function compile(schema) {
  const s = String(schema.$schema ?? '').replace(/#$/, '');
  const ajv = s === 'http://json-schema.org/draft-07/schema' || s === 'https://json-schema.org/draft-07/schema' ? draft07 : draft2020;
  // A schema object is compiled once per instance of ajv; a copy keeps
  // the same $id from clashing across cases.
  const copy = structuredClone(schema);
  delete copy.$id;
  return ajv.compile(copy);
}

const cases = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const out = cases.map(c => {
  const canonical = compile(c.canonical);
  const lowered = compile(c.lowered);
  return {
    name: c.name,
    canonical: c.pairs.map(([, u]) => canonical(u)),
    lowered: c.pairs.map(([x]) => lowered(x)),
  };
});
process.stdout.write(JSON.stringify(out));
