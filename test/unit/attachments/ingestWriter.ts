/**
 * For the crash test: ingests a task's outbox (run `run-1`) and prints `done` when it returns.
 * The parent kills it with SIGKILL at a random moment and checks that nothing was lost or doubled.
 */
import * as fs from 'node:fs';
import { openAttachments } from './attachmentFixture';

async function main(): Promise<void> {
	const [folder, task] = process.argv.slice(2);
	const { store } = await openAttachments(folder!);
	fs.writeSync(1, 'open\n');
	store.ingest(task!, { runId: 'run-1' });
	fs.writeSync(1, 'done\n');
}

void main();
