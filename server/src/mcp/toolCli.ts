/**
 * `dist/desk-tool.js` (started as `desk-tool` from the run's IPC folder): one desk tool call from the
 * shell (glossary: Desk tools), for an agent whose harness cannot make MCP calls (some Codex versions
 * cancel them in `exec`). `desk-tool NAME --json '{…}'` calls the tool over the run's socket and
 * prints its result as JSON; a refusal prints `{"error": …}` and exits 2. `desk-tool --list` prints
 * the tools with their arguments. Exit codes: 0 done, 2 refused by the desk, 64 bad usage, 70 the
 * desk could not be reached.
 */
import { socketDispatcher, socketFromEnv } from './socketClient';

const usage = `usage: desk-tool NAME [--json '{"arg": …}']   call one desk tool, print its result as JSON
       desk-tool --list                         the tools and their arguments
`;

export async function toolCli(argv: readonly string[]): Promise<number> {
	const [first, ...rest] = argv;
	if (first === undefined || first === '--help' || first === '-h') {
		process.stdout.write(usage);
		return first === undefined ? 64 : 0;
	}
	let args: unknown = {};
	if (first !== '--list') {
		if (rest.length !== 0 && !(rest.length === 2 && rest[0] === '--json')) {
			process.stderr.write(`desk-tool: unexpected arguments\n${usage}`);
			return 64;
		}
		if (rest.length === 2) {
			try {
				args = JSON.parse(rest[1]!);
			} catch (error) {
				process.stderr.write(`desk-tool: --json is not JSON: ${(error as Error).message}\n`);
				return 64;
			}
		}
	}
	let dispatcher;
	try {
		const place = socketFromEnv();
		dispatcher = socketDispatcher(place.socketPath, place.token);
	} catch (error) {
		process.stderr.write(`desk-tool: ${(error as Error).message}\n`);
		return 64;
	}
	try {
		if (first === '--list') {
			const tools = await dispatcher.tools();
			process.stdout.write(
				`${JSON.stringify(
					tools.map((t) => ({ name: t.name, description: t.description, arguments: t.inputSchema })),
					null,
					2,
				)}\n`,
			);
			return 0;
		}
		const outcome = await dispatcher.call(first, args, {});
		if (!outcome.ok) {
			process.stdout.write(`${JSON.stringify({ error: outcome.error })}\n`);
			process.stderr.write(`desk-tool: ${outcome.error.code}: ${outcome.error.message}\n`);
			return 2;
		}
		process.stdout.write(`${JSON.stringify(outcome.result ?? null)}\n`);
		return 0;
	} catch (error) {
		process.stderr.write(`desk-tool: ${(error as Error).message}\n`);
		return 70;
	}
}

if (require.main === module) {
	void toolCli(process.argv.slice(2)).then((code) => {
		process.exitCode = code;
	});
}
