/**
 * A `desk` subcommand that is the command-line face of an operation (glossary: Operation): it reads
 * the operation's params from the command line, calls the operation for the person at the command
 * line (their git identity) with `--request-id` as the action's id, and prints the result as text or,
 * with --json, as is. The command keeps only what is the command line's own: its arguments and its
 * text.
 */
import type { AnyOperation } from '../operations';
import { personIdentity } from '../operations/identity';
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
	/** The exit code when the call succeeded (0 unless the command says otherwise). */
	exitCode?(result: R): number;
}

export function operationCommand<P, R>(op: Operation<P, R>, face: CommandFace<P, R>): OperationCommand {
	const command = async (context: CommandContext): Promise<number> => {
		const params = await face.params(context);
		const requestId = context.values['request-id'];
		if (requestId !== undefined && !requestIdPattern.test(requestId)) {
			throw new UsageError('--request-id takes 8 to 128 letters, digits or . _ : - (a UUID, say)');
		}
		const desk = await context.open();
		const result = await invokeOperation(
			op,
			{
				desk,
				actor: { kind: 'cli', person: await personIdentity() },
				events: noEvents,
				signal: new AbortController().signal,
				...(requestId === undefined ? {} : { requestId }),
			},
			params,
		);
		print(context.out, result, () => face.text(result, context));
		return face.exitCode?.(result) ?? 0;
	};
	return Object.assign(command, { operation: op as AnyOperation });
}
