// workflow.ts -- a whole Smriti workflow through a client generated from the
// served /openapi.json (openapi-typescript writes schema.d.ts beside this
// file, openapi-fetch makes the calls), compiled with tsc --strict: no cast,
// no `any`, no non-null assertion.  Every field read below is typed by the
// document alone; tests/js/ts-client.test.mjs generates the types, compiles
// this file, runs it against `smriti serve` and checks every response it
// reports against its schema.
import createClient from 'openapi-fetch';
import type { Client } from 'openapi-fetch';
import type { components, paths } from './schema.js';

type Schemas = components['schemas'];
export type Checkpoint = Schemas['Checkpoint'];
export type Task = Schemas['Task'];
export type ErrorCode = Schemas['Error']['error']['code'];

// One response as the server sent it, for the test to check against the document.
export interface Seen {
  method: string;
  path: string;
  status: number;
  contentType: string;
  text: string;
}

export interface Options {
  baseUrl: string;       // the server the workflow runs on
  importUrl: string;     // another server, with an empty store, for the import
  report: (seen: Seen) => void;
}

// What the workflow saw, for the test's own assertions.
export interface Summary {
  space: string;
  fork: string;
  head: Checkpoint;
  merged: Checkpoint;
  restored: Checkpoint;
  conflictFields: string[];
  missingCode: ErrorCode;
  searchHits: number;
  blamed: string[];
  reflogActions: string[];
  imported: { spaces: string[]; checkpoints: number };
  calls: number;
}

type Api = Client<paths>;

function check(ok: boolean, what: string): asserts ok {
  if (!ok) throw new Error(`workflow: ${what}`);
}

// The data of a successful call; a failure throws with its status and error body.
function must<T>(what: string, r: { data?: T; error?: unknown; response: Response }): T {
  if (r.data === undefined) {
    throw new Error(`${what}: ${r.response.status} ${JSON.stringify(r.error)}`);
  }
  return r.data;
}

function client(baseUrl: string, report: Options['report'], count: { n: number }): Api {
  const api = createClient<paths>({ baseUrl });
  api.use({
    async onResponse({ request, response }) {
      const url = new URL(request.url);
      count.n++;
      report({
        method: request.method,
        path: url.pathname + url.search,
        status: response.status,
        contentType: response.headers.get('content-type') ?? '',
        text: await response.clone().text(),
      });
      return undefined;
    },
  });
  return api;
}

// The text of each open task, and of each done one.
function taskTexts(tasks: Task[], status: NonNullable<Task['status']>): string[] {
  return tasks.filter((t) => (t.status ?? 'open') === status).map((t) => t.text);
}

// Metadata values are typed: a string is read as a string without a cast.
function metadataString(c: Checkpoint, key: string): string | undefined {
  const v = c.metadata[key];
  return typeof v === 'string' ? v : undefined;
}

async function writeHistory(api: Api, space: string) {
  const created = must('createSpace', await api.POST('/v4/repos', {
    body: { name: space, description: 'typed client workflow' },
  }));
  check(created.name === space && created.head === null, 'a new Space is empty');

  // the agent surface: POST /chat/commit with every kind of item
  const first = must('createCheckpoint', await api.POST('/chat/commit', {
    body: {
      repo_id: space,
      title: 'Pick a database',
      summary: 'We compared SQLite and PostgreSQL.',
      decisions: ['Use SQLite', { text: 'Keep one file per Space' }],
      assumptions: [{ text: 'One machine' }],
      tasks: ['Write the schema', { text: 'Benchmark writes', status: 'open' }],
      open_questions: ['When do we need PostgreSQL?'],
      entities: [{ name: 'SQLite', kind: 'software', description: 'the store' }],
      artifacts: [{ name: 'schema.sql', kind: 'text', content: 'CREATE TABLE t (id INTEGER);' }],
      metadata: { source: 'ts-client', turns: 3, reviewed: false, range: [1, 3], tool: { name: 'tsc' } },
      author: 'ts-client',
    },
  }));
  check(first.parent_hash === null, 'the first checkpoint has no parent');
  check(metadataString(first, 'source') === 'ts-client', 'metadata kept');

  // the resource route: POST /v4/repos/{id}/commits on the HEAD just read
  const second = must('commitCheckpoint', await api.POST('/v4/repos/{id}/commits', {
    params: { path: { id: space } },
    body: {
      parent: first.commit_hash,
      author: 'ts-client',
      checkpoint: {
        title: 'Schema written',
        decisions: ['Use SQLite', 'Keep one file per Space', 'Add full-text search'],
        tasks: [{ text: 'Write the schema', status: 'done' }, { text: 'Benchmark writes', status: 'open' }],
        entities: ['SQLite'],
        artifacts: [{ name: 'schema.sql', kind: 'text', content: 'CREATE TABLE t (id INTEGER PRIMARY KEY);' }],
        metadata: { source: 'ts-client', step: 2 },
      },
    },
  }));
  check(second.parent_hash === first.commit_hash, 'commit on its parent');

  // a change to HEAD: one task done, one added
  const update = must('updateCheckpoint', await api.PATCH('/v4/repos/{id}/head', {
    params: { path: { id: space } },
    body: { parent: second.commit_hash, done: ['Benchmark writes'], add: { tasks: ['Ship it'] }, author: 'ts-client' },
  }));
  check(update.checkpoint.parent_hash === second.commit_hash, 'the patch lands on HEAD');
  check(update.changed.length > 0, 'the change is said in words');
  return { first, second, third: update.checkpoint };
}

async function readAndDiff(api: Api, space: string, first: Checkpoint) {
  const head = must('getHead', await api.GET('/repos/{id}/head', { params: { path: { id: space } } }));
  check(taskTexts(head.tasks, 'done').join() === 'Write the schema,Benchmark writes', 'done tasks');
  check(taskTexts(head.tasks, 'open').join() === 'Ship it', 'open tasks');

  const diff = must('diffCheckpoints', await api.GET('/v4/diff', {
    params: { query: { from: first.commit_hash, to: space } },
  }));
  check(!diff.identical && diff.to === head.commit_hash, 'the diff names its ends');
  check(diff.title?.to === 'Schema written', 'the title changed');
  check((diff.decisions?.added ?? []).map((d) => d.text).join() === 'Add full-text search', 'a decision added');
  const changed = (diff.tasks?.changed ?? []).map((c) => `${c.from.status}->${c.to.status}`);
  check(changed.join() === 'open->done,open->done', `tasks changed status: ${changed}`);
  check((diff.assumptions?.removed ?? []).length === 1, 'the assumption was dropped');
  check(diff.metadata?.from.source === 'ts-client', 'metadata compared (a patch does not carry it forward)');
  return head;
}

async function forkAndMerge(api: Api, space: string, fork: string, head: Checkpoint) {
  const forked = must('forkSpace', await api.POST('/v4/repos/{id}/fork', {
    params: { path: { id: space } },
    body: { into: fork },
  }));
  check(forked.head === head.commit_hash, 'the fork starts at HEAD');
  must('updateCheckpoint (fork)', await api.PATCH('/v4/repos/{id}/head', {
    params: { path: { id: fork } },
    body: { summary: 'The fork went with WAL mode.', add: { decisions: ['Use WAL mode'] } },
  }));
  must('updateCheckpoint (space)', await api.PATCH('/v4/repos/{id}/head', {
    params: { path: { id: space } },
    body: { summary: 'The Space kept the rollback journal.' },
  }));

  const preview = must('mergeCheckpoint (dry run)', await api.POST('/v4/repos/{id}/merge', {
    params: { path: { id: space } },
    body: { ref: fork, dry_run: true },
  }));
  check(preview.status === 'conflict' && preview.ahead === 1 && preview.behind === 1, 'a dry run sees the conflict');

  const refused = await api.POST('/v4/repos/{id}/merge', { params: { path: { id: space } }, body: { ref: fork } });
  check(refused.response.status === 409 && refused.error !== undefined, 'a conflicting merge is refused');
  const conflictFields = refused.error && 'conflicts' in refused.error
    ? (refused.error.conflicts ?? []).map((c) => c.field) : [];
  check(conflictFields.join() === 'summary', `the conflict is named: ${conflictFields}`);
  check(refused.error.error.code === 'conflict', 'its reason code');

  const seen = must('getHead (before the merge)', await api.GET('/repos/{id}/head', { params: { path: { id: space } } }));
  const merged = must('mergeCheckpoint', await api.POST('/v4/repos/{id}/merge', {
    params: { path: { id: space } },
    body: { ref: fork, resolution: { summary: 'theirs' }, expect_head: seen.commit_hash, author: 'ts-client' },
  }));
  check(merged.status === 'merged', 'merged');
  const checkpoint = merged.checkpoint;
  // a written merge is a sealed Checkpoint with two parents (a dry run's may be
  // the unsealed MergePreview, which has neither)
  check(checkpoint !== undefined && 'merge_parent_hash' in checkpoint, 'a merge checkpoint');
  check(checkpoint.summary === 'The fork went with WAL mode.', 'the resolution applied');
  return { merged: checkpoint, conflictFields };
}

async function history(api: Api, space: string, first: Checkpoint) {
  const restored = must('restoreCheckpoint', await api.POST('/v4/repos/{id}/restore', {
    params: { path: { id: space } },
    body: { ref: first.commit_hash, author: 'ts-client' },
  }));
  check(restored.title === first.title, 'the restored state');

  const found = must('search', await api.GET('/v4/search', { params: { query: { q: 'full-text', space } } }));
  check(found.results.length > 0, 'search finds the decision');
  for (const r of found.results) check(r.first === undefined || r.first.commit_hash.length === 64, 'first is typed');

  const blame = must('blame', await api.GET('/v4/blame', { params: { query: { ref: `${space}~1` } } }));
  const blamed = blame.items.map((i) => `${i.field}:${i.introduced.commit_hash.slice(0, 12)}`);
  check(blame.items.some((i) => i.field === 'decisions' && i.introduced.author === 'ts-client'), 'blame names authors');

  const reflog = must('getReflog', await api.GET('/v4/repos/{id}/reflog', {
    params: { path: { id: space }, query: { limit: 20 } },
  }));
  return { restored, searchHits: found.total, blamed, reflogActions: reflog.map((e) => e.action) };
}

async function exportImport(api: Api, other: Api, space: string, fork: string) {
  const bundle = must('exportBundle', await api.GET('/v4/export', { params: { query: { space } } }));
  // without text: true the answer is the bundle itself, not {bundle_text}
  check('spaces' in bundle, 'a bundle document');
  check(bundle.format === 'smriti-bundle' && bundle.spaces.length === 1, 'a bundle of one Space');
  const exported = bundle.spaces[0];
  check(exported !== undefined && exported.checkpoints.every((c) => c.commit_hash.length === 64), 'its checkpoints');
  const forkBundle = must('exportBundle (fork)', await api.GET('/v4/export', { params: { query: { space: fork } } }));
  check('spaces' in forkBundle, 'a bundle document');

  const result = must('importBundle', await other.POST('/v4/import', { body: { bundle } }));
  const again = must('importBundle (fork)', await other.POST('/v4/import', { body: { bundle: forkBundle } }));
  const head = must('getHead (imported)', await other.GET('/repos/{id}/head', { params: { path: { id: space } } }));
  check(head.commit_hash === exported.head, 'the imported HEAD is the exported one');
  return {
    spaces: [...result.spaces, ...again.spaces].map((s) => s.name),
    checkpoints: result.checkpoints + again.checkpoints,
  };
}

// An error answer is typed too: its reason code is one of the document's.
async function missing(api: Api): Promise<ErrorCode> {
  const r = await api.GET('/repos/{id}/head', { params: { path: { id: 'no-such-space' } } });
  check(r.data === undefined && r.error !== undefined, 'a missing Space is an error');
  return r.error.error.code;
}

export async function workflow(o: Options, space = 'typed', fork = 'typed-wal'): Promise<Summary> {
  const count = { n: 0 };
  const api = client(o.baseUrl, o.report, count);
  const other = client(o.importUrl, o.report, count);
  const { first } = await writeHistory(api, space);
  const head = await readAndDiff(api, space, first);
  const { merged, conflictFields } = await forkAndMerge(api, space, fork, head);
  const h = await history(api, space, first);
  const imported = await exportImport(api, other, space, fork);
  const missingCode = await missing(api);
  return { space, fork, head, merged, conflictFields, missingCode, imported, ...h, calls: count.n };
}
