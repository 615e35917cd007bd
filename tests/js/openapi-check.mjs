// openapi-check.mjs -- validates HTTP responses against the OpenAPI document
// of the binaries under test, so that the document cannot drift from the
// server: every response an HTTP test receives through http-helpers.mjs's
// request() is checked here (its status must be documented for its route,
// and a JSON body must match that status's schema).  The document comes from
// `smriti-full openapi`, the same text GET /openapi.json serves.
import { spawnSync } from 'node:child_process';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { SMRITI_FULL, childEnv } from './helpers.mjs';

let cached = null;

// { doc, ajv, routes: [{ method, template, re, op }] }, built once per process.
export function openapi() {
  if (cached) return cached;
  const r = spawnSync(SMRITI_FULL, ['openapi'], { encoding: 'utf8', env: childEnv() });
  if (r.status !== 0) throw new Error(`smriti-full openapi exited ${r.status}: ${r.stderr}`);
  const doc = JSON.parse(r.stdout);
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, 'openapi');
  const routes = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    const re = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`);
    for (const [method, op] of Object.entries(item)) routes.push({ method: method.toUpperCase(), template, re, op });
  }
  cached = { doc, ajv, routes, validators: new Map() };
  return cached;
}

function validator(ref) {
  const o = openapi();
  if (!o.validators.has(ref)) o.validators.set(ref, o.ajv.compile({ $ref: `openapi${ref}` }));
  return o.validators.get(ref);
}

function check(ref, body, what) {
  const v = validator(ref);
  if (!v(body)) {
    const errs = v.errors.slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
    throw new Error(`${what}: the body does not match ${ref} (the document is src/http/openapi.c):\n  ${errs.join('\n  ')}\n  body: ${JSON.stringify(body).slice(0, 600)}`);
  }
}

// Throws when res ({ status, headers, text, json }) is not what the document
// says method + path answers.
export function checkResponse(method, rawPath, res) {
  const what = `${method} ${rawPath} -> ${res.status}`;
  const path = rawPath.split('?')[0];
  if (method === 'HEAD' || method === 'OPTIONS') return;
  const { routes } = openapi();
  const onPath = routes.filter((r) => r.re.test(path));
  const route = onPath.find((r) => r.method === method);
  const isJson = /^application\/json\b/.test(res.headers['content-type'] || '');
  if (!route) {
    // no route: the server's own 404, 405 or 414, always the Error shape
    if (isJson) check('#/components/schemas/Error', res.json, what);
    return;
  }
  const doc = route.op.responses[String(res.status)] || route.op.responses.default;
  if (!doc) {
    throw new Error(`${what}: status ${res.status} is not documented for ${method} ${route.template} (route_errors in src/http/openapi.c)`
      + ` (documented: ${Object.keys(route.op.responses).join(', ')}); body: ${res.text.slice(0, 300)}`);
  }
  const json = doc.content?.['application/json'];
  if (!json) return;
  if (!isJson) {
    // another documented media type of the same answer (text/event-stream) is fine
    const type = (res.headers['content-type'] || '').split(';')[0].trim();
    if (doc.content[type]) return;
    throw new Error(`${what}: documented as JSON, sent ${res.headers['content-type']}`);
  }
  if (res.json === null) throw new Error(`${what}: the body is not JSON: ${res.text.slice(0, 200)}`);
  check(json.schema.$ref, res.json, what);
}
