// cold_read.mjs -- the peer of a cold `smriti head SPACE --json`: a whole
// Node process that opens LangGraph.js's SqliteSaver on FILE, reads THREAD's
// latest checkpoint with getTuple and prints it as JSON (bench/peers.sh).
//
//   node cold_read.mjs FILE THREAD
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';

const [file, thread] = process.argv.slice(2);
const saver = SqliteSaver.fromConnString(file);
const tuple = await saver.getTuple({ configurable: { thread_id: thread } });
if (!tuple) {
  process.stderr.write(`cold_read: no checkpoint of thread '${thread}' in '${file}'\n`);
  process.exit(1);
}
process.stdout.write(JSON.stringify(tuple) + '\n');
