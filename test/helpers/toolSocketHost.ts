/**
 * A desk process that hosts one run's desk tools socket and nothing else, for the kill test: it
 * opens the library, serves the operations table for the agent its argument names, prints
 * `{"ipcDir","token"}` once it listens, and serves until killed. Given `reuse`, it listens again in
 * that folder with that token, as the desk restarted. With DESK_TEST_EXIT_BEFORE_TOOL_REPLY set it
 * exits between a call's effect and its reply (see socketHost.ts).
 */
import { Desk } from '../../server/src/desk';
import { operationsDispatcher } from '../../server/src/mcp/operationsDispatcher';
import { hostToolSocket } from '../../server/src/mcp/socketHost';
import type { Actor } from '../../server/src/operations/actor';
import { recordingLogger } from './deskFixture';

export interface ToolSocketHostArgs {
	libraryDir: string;
	actor: Extract<Actor, { kind: 'agent' }>;
	reuse?: { ipcDir: string; token: string };
}

async function main(): Promise<void> {
	const args = JSON.parse(process.argv[2]!) as ToolSocketHostArgs;
	const desk = await Desk.open({ libraryDir: args.libraryDir, logger: recordingLogger() });
	const socket = await hostToolSocket(
		operationsDispatcher({ desk, actor: args.actor }),
		args.reuse ? { reuse: args.reuse } : {},
	);
	process.stdout.write(`${JSON.stringify({ ipcDir: socket.ipcDir, token: socket.token })}\n`);
}

if (require.main === module) {
	void main();
}
