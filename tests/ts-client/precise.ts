// precise.ts -- what the generated types refuse, checked by the compiler:
// each @ts-expect-error below must meet an error, so a schema that went
// loose again (an untyped object, a string where an enum was) fails tsc
// with "Unused '@ts-expect-error' directive".  Nothing here runs.
import type { components, paths } from './schema.js';

type Schemas = components['schemas'];
type CommitBody = paths['/v4/repos/{id}/commits']['post']['requestBody']['content']['application/json'];

export const task: Schemas['Task'] = { text: 'Ship', status: 'done' };
// @ts-expect-error a task's status is open or done
export const badTask: Schemas['Task'] = { text: 'Ship', status: 'doing' };

export const code: Schemas['Error']['error']['code'] = 'not_found';
// @ts-expect-error an error's reason code is one of the server's
export const badCode: Schemas['Error']['error']['code'] = 'nope';

export const body: CommitBody = { checkpoint: { metadata: { source: 'ts', n: 1, ok: true, none: null } } };
// @ts-expect-error metadata values are JSON values, not functions
export const badMetadata: CommitBody = { checkpoint: { metadata: { f: () => 1 } } };
// @ts-expect-error an item of a list is a string or an object with its key
export const badItem: CommitBody = { checkpoint: { decisions: [42] } };
// @ts-expect-error an artifact needs its content
export const badArtifact: CommitBody = { checkpoint: { artifacts: [{ name: 'a.md' }] } };

export function statusOf(r: Schemas['MergeResult']): 'merged' | 'fast-forward' | 'up-to-date' | 'conflict' {
  return r.status;
}

export function field(d: Schemas['Diff']): string | undefined {
  // @ts-expect-error a diff has no field 'colour'
  return d.colour;
}
