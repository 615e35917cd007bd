// licence.test.mjs -- the project says under what terms it may be used:
// LICENSE holds the Apache License 2.0, and debian/copyright (the machine-
// readable format) gives every vendored file a paragraph of its own whose
// licence has its full text, so the package never ships a file it does not
// account for.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './helpers.mjs';

// debian/copyright as a list of paragraphs, each a map of its fields.
function paragraphs(text) {
  return text.trim().split(/\n\s*\n/).map((p) => {
    const fields = new Map();
    let key;
    for (const line of p.split('\n')) {
      const m = /^([A-Za-z-]+):\s?(.*)$/.exec(line);
      if (m && !line.startsWith(' ')) { key = m[1]; fields.set(key, m[2]); } else if (key) fields.set(key, `${fields.get(key)}\n${line}`);
    }
    return fields;
  });
}

test('LICENSE is the Apache License 2.0', () => {
  const text = readFileSync(path.join(ROOT, 'LICENSE'), 'utf8');
  assert.match(text, /Apache License\s+Version 2\.0, January 2004/);
  assert.match(text, /END OF TERMS AND CONDITIONS/);
});

test('debian/copyright covers the sources and every vendored file, each licence with its text', () => {
  const paras = paragraphs(readFileSync(path.join(ROOT, 'debian/copyright'), 'utf8'));
  assert.match(paras[0].get('Format'), /copyright-format\/1\.0/);
  const files = paras.filter((p) => p.has('Files'));
  const texts = new Map(paras.filter((p) => !p.has('Files') && p.has('License'))
    .map((p) => [p.get('License').split('\n')[0], p.get('License')]));
  const star = files.find((p) => p.get('Files') === '*');
  assert.equal(star.get('License'), 'Apache-2.0');
  const vendored = readdirSync(path.join(ROOT, 'src/ui/vendor'))
    .filter((f) => !/^README|\.LICENSE$/.test(f)).map((f) => `src/ui/vendor/${f}`);
  assert.ok(vendored.length >= 1);
  for (const f of vendored) {
    const p = files.find((q) => q.get('Files').split(/\s+/).includes(f));
    assert.ok(p, `${f} has no Files paragraph`);
    assert.match(p.get('Copyright'), /\S/, f);
    const licence = p.get('License').split('\n')[0];
    assert.notEqual(licence, 'Apache-2.0', `${f} is not ours`);
    assert.ok((texts.get(licence) || '').split('\n').length > 5, `${licence} has no full text`);
  }
  // Expat is markdown-it's MIT licence, word for word
  const mit = readFileSync(path.join(ROOT, 'src/ui/vendor/markdown-it.LICENSE'), 'utf8');
  assert.ok(texts.get('Expat').replace(/\n \.?/g, ' ').includes('THE SOFTWARE IS PROVIDED "AS IS"'));
  assert.match(mit, /Vitaly Puzrin/);
});
