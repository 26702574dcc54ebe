/**
 * `dist/desk-mcp.js`: the desk tools inside a run's sandbox (glossary: Desk tools). The agent starts
 * it as a stdio MCP server; it serves the tools of the desk that carries the run by forwarding each
 * `tools/list` and `tools/call` over the run's socket (`DESK_MCP_SOCKET`, bound read-only into the
 * sandbox) with the run's token (`DESK_MCP_TOKEN`, from the environment only). It holds no state and
 * touches no file: the desk does everything, as the run's agent.
 */
import { serveToolsOnStdio } from './server';
import { socketDispatcher, socketFromEnv } from './socketClient';

export function proxyMain(): void {
	let place;
	try {
		place = socketFromEnv();
	} catch (error) {
		process.stderr.write(`desk-mcp: ${(error as Error).message}\n`);
		process.exitCode = 2;
		return;
	}
	const serving = serveToolsOnStdio(socketDispatcher(place.socketPath, place.token), {
		onError: (error) => process.stderr.write(`desk-mcp: ${error.message}\n`),
	});
	void serving.closed.then(() => process.exit(0));
}

if (require.main === module) {
	proxyMain();
}
