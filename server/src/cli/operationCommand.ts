/**
 * A `desk` subcommand that is the command-line face of an operation (glossary: Operation): it reads
 * the operation's params from the command line, calls the operation for the person at the command
 * line (their git identity) with `--request-id` as the action's id, and prints the result as text or,
 * with --json, as is. The command keeps only what is the command line's own: its arguments and its
 * text.
 */
import type { AnyOperation } from '../operations';
import { personIdentityWhenAsked } from '../operations/identity';
import { invokeOperation, noEvents, type Operation } from '../operations/operation';
import { requestIdPattern } from '../store/clientRequests';
import { UsageError } from './args';
import type { Command, CommandContext } from './context';
import { print } from './output';

/** A command made by {@link operationCommand}: the surfaces test finds the operation it serves. */
export interface OperationCommand extends Command {
	readonly operation: AnyOperation;
}

export interface CommandFace<P, R> {
	/** The operation's params from the command's arguments; throws UsageError on bad usage. */
	params(context: CommandContext): P | Promise<P>;
	/** The result as text for a terminal (made inert with `terminalSafe`); --json prints the result itself. */
	text(result: R, context: CommandContext): string;
	/** What --json prints, where the command's JSON shape is older than its operation's result (default: the result). */
	json?(result: R, context: CommandContext): unknown;
	/** Writes the result itself instead of its text (a file's bytes to a pipe, say); --json is printed as always. */
	write?(result: R, context: CommandContext): void;
	/** The exit code when the call succeeded (0 unless the command says otherwise). */
	exitCode?(result: R): number;
	/**
	 * What the command shows instead of the result when it has more to do first (wait for the run
	 * the call started in this process, say), with its text and exit code; undefined shows the result.
	 */
	follow?(
		result: R,
		context: CommandContext,
	): Promise<{ value: unknown; text(): string; exitCode: number } | undefined>;
}

export function operationCommand<P, R>(op: Operation<P, R>, face: CommandFace<P, R>): OperationCommand {
	const command = async (context: CommandContext): Promise<number> => {
		const params = await face.params(context);
		const requestId = context.values['request-id'];
		if (requestId !== undefined && !requestIdPattern.test(requestId)) {
			throw new UsageError('--request-id takes 8 to 128 letters, digits or . _ : - (a UUID, say)');
		}
		const result = await invokeFromCommandLine(op, context, params, requestId);
		const followed = await face.follow?.(result, context);
		if (followed) {
			print(context.out, followed.value, followed.text);
			return followed.exitCode;
		}
		if (face.write && !context.out.json) {
			face.write(result, context);
		} else {
			print(context.out, face.json ? face.json(result, context) : result, () => face.text(result, context));
		}
		return face.exitCode?.(result) ?? 0;
	};
	return commandOf(op, command);
}

/** `command`, which prints as it goes (a long history a page at a time, say), as the face of `op`. */
export function commandOf(op: AnyOperation, command: Command): OperationCommand {
	return Object.assign(command, { operation: op });
}

/** Calls `op` for the person at the command line (their git identity), as every command face does. */
export async function invokeFromCommandLine<P, R>(
	op: Operation<P, R>,
	context: CommandContext,
	params: P,
	requestId?: string,
): Promise<R> {
	return invokeOperation(
		op,
		{
			desk: await context.open(),
			actor: { kind: 'cli', person: personIdentityWhenAsked() },
			events: noEvents,
			signal: new AbortController().signal,
			...(requestId === undefined ? {} : { requestId }),
		},
		params,
	);
}
