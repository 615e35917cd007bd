// checkpoint_doc.mjs -- the checkpoint the benchmarks store and read: a
// Space's state after a design session (8 decisions, 6 tasks, a 1 KiB
// artifact), so that every benchmark reads and writes the same document.
export const CHECKPOINT_DOC = {
  title: 'storage decided', summary: 'We compared stores and picked one. '.repeat(4),
  decisions: Array.from({ length: 8 }, (_, i) => `decision ${i}: keep it simple`),
  assumptions: ['one writer at a time', 'fsync is honest'],
  tasks: Array.from({ length: 6 }, (_, i) => ({ text: `task ${i}`, status: i % 2 ? 'done' : 'open' })),
  open_questions: ['when do we shard?'],
  entities: [{ name: 'SQLite', kind: 'library' }, { name: 'PostgreSQL', kind: 'service' }],
  artifacts: [{ name: 'plan.md', kind: 'plan', content: '- step\n'.repeat(150) }],
};
