/**
 * `desk`: the command line over the same desk core as the extension's server, for scripts, CI and
 * agents. Every command prints JSON with --json (records with the field names of docs/glossary.md) and
 * human-readable text without it. Exit codes: 0 done, 2 refused by the desk (the reason on stderr,
 * and with --json as {"error": …} on stdout; nothing changed), 64 bad usage, 70 internal error.
 *
 * This file reads the command line and hands it to the command named; each group of commands is a
 * file of `commands/`, and `commands/index.ts` names them all.
 */
import { setFlagsFromString } from 'node:v8';
import { DeskError, describeError } from '../core/errors';
import { leveledLogger, type LogLevel } from '../core/logger';
import { Desk } from '../desk';
import { runDeskTools } from '../mcp/runTools';
import { noEvents } from '../operations/operation';
import { clientRequest, requestIdPattern } from '../store/clientRequests';
import { parseCommandLine, positiveInteger, UsageError } from './args';
import { commands } from './commands';
import type { CommandContext } from './context';
import type { Output } from './output';
import { jsonForTerminal, terminalSafe as t, writeMessage } from './terminal';
import { usage } from './usage';

export async function main(
	argv: string[],
	out: Output = { json: false, write: (chunk) => process.stdout.write(chunk) },
): Promise<number> {
	let parsed;
	try {
		parsed = parseCommandLine(argv);
	} catch (error) {
		writeMessage(process.stderr, `desk: ${t((error as Error).message)}\n\n${usage}`);
		return 64;
	}
	const { values, positionals } = parsed;
	out.json = values.json ?? false;
	if (values.help || positionals.length === 0) {
		process.stdout.write(usage);
		return values.help ? 0 : 64;
	}
	const store = values.store ?? process.env['DESK_STORE'];
	if (!store) {
		process.stderr.write(`desk: no library folder: pass --store DIR or set DESK_STORE\n`);
		return 64;
	}
	const level: LogLevel = values.verbose ? 'debug' : 'warn';
	const logger = leveledLogger(level, (l, message) => writeMessage(process.stderr, `[${l}] ${t(message)}\n`));

	let desk: Desk | undefined;
	try {
		const [area, verb, ...rest] = positionals;
		const command = `${area} ${verb ?? ''}`.trim();
		if (oneShotProcess) {
			keepQuickWasmCode(command, area);
		}
		const version = values.version === undefined ? undefined : positiveInteger(values.version, '--version');
		const open = async () => {
			if (!desk) {
				desk = await Desk.open({ libraryDir: store, logger });
				// The desk tools of the runs `desk run go` carries out here, from the bundles beside this one (dist/).
				desk.deskTools = runDeskTools({
					desk,
					events: noEvents,
					bundleDir: __dirname,
					onError: (error) => logger.warn(`desk tools: ${error.message}`),
				});
			}
			return desk;
		};
		const context: CommandContext = {
			command,
			verb,
			rest,
			values,
			out,
			store,
			logger,
			version,
			madeBy: 'conductor',
			open,
			lib: async () => (await open()).library,
			requestOf: (action, params) => {
				const id = values['request-id'];
				if (id === undefined) {
					return {};
				}
				if (!requestIdPattern.test(id)) {
					throw new UsageError('--request-id takes 8 to 128 letters, digits or . _ : - (a UUID, say)');
				}
				return { request: clientRequest(action, id, params)! };
			},
		};
		const run = commands.get(command);
		if (!run) {
			throw new UsageError(`unknown command: ${positionals.join(' ')}`);
		}
		return await run(context);
	} catch (error) {
		if (error instanceof UsageError) {
			writeMessage(process.stderr, `desk: ${t(error.message)}\n\n${usage}`);
			return 64;
		}
		if (error instanceof DeskError) {
			if (out.json) {
				out.write(jsonForTerminal({ error: error.toJSON() }) + '\n');
			}
			writeMessage(process.stderr, `desk: ${t(describeError(error))}\n`);
			// The library folder is a file: the command line was pointed at the wrong place.
			return error.code === 'store.notAFolder' ? 64 : 2;
		}
		writeMessage(process.stderr, `desk: internal error: ${(error as Error).stack ?? String(error)}\n`);
		return 70;
	} finally {
		desk?.close();
	}
}

/** Commands that live as long as a run or a session: SQLite's optimised code pays off there. */
const longLived = new Set(['run go', 'run carry', 'mcp']);

/**
 * V8 compiles SQLite's WebAssembly quickly first and, for code run often, optimises it again on
 * background threads; a process that has answered still waits for those compilations before it
 * exits. A one-shot command is over long before the optimised code would pay off: that waiting and
 * compiling was 40% of `desk asset atgo` (0.45 s, 0.26 s without). Those commands keep the quick
 * code; the long-lived ones optimise as usual.
 */
function keepQuickWasmCode(command: string, area: string | undefined): void {
	if (!longLived.has(command) && !longLived.has(area ?? '')) {
		setFlagsFromString('--wasm-tiering-budget=1000000000');
	}
}

/**
 * A reader that goes away before the end (`desk asset versions ID | head`) closes the pipe under the
 * output: what is left to print goes nowhere, and the command ends as it would have (a run it carries
 * goes on to its end), where Node would otherwise crash with the stack of an unhandled EPIPE. Any
 * other error of the stream is thrown as before.
 */
function printNothingOnceClosed(stream: NodeJS.WriteStream): void {
	stream.on('error', (error: NodeJS.ErrnoException) => {
		if (error.code !== 'EPIPE') {
			throw error;
		}
	});
}

/** The `desk` process: this command line, its exit code the process's (launcher.ts calls it). */
export function runAsProcess(): void {
	oneShotProcess = true;
	printNothingOnceClosed(process.stdout);
	printNothingOnceClosed(process.stderr);
	main(process.argv.slice(2)).then(
		(code) => {
			process.exitCode = code;
		},
		(error: unknown) => {
			writeMessage(process.stderr, `desk: internal error: ${String(error)}\n`);
			process.exitCode = 70;
		},
	);
}

/** True when `main` runs as the process's command line (not called by a test in its own process). */
let oneShotProcess = false;

if (require.main === module) {
	runAsProcess();
}
