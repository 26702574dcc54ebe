/**
 * The operations table and its faces (glossary: Operation): every operation is served on each surface
 * it declares, through the operation (a JSON-RPC handler and a `desk` command call it, never code of
 * their own), and every JSON-RPC method and `desk` command is an operation's face or one of the
 * exceptions below, each with its reason.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Desk } from '../../../server/src/desk';
import { commands } from '../../../server/src/cli/commands';
import type { OperationCommand } from '../../../server/src/cli/operationCommand';
import type { Command } from '../../../server/src/cli/context';
import { operations, type AnyOperation } from '../../../server/src/operations';
import type { RunningCall } from '../../../server/src/operations/operation';
import { deskRequests } from '../../../server/src/protocol/protocol';
import type { Schema } from '../../../server/src/protocol/schema';
import { createHandlers, type HandlerContext } from '../../../server/src/rpc/handlers';

/** JSON-RPC methods that are not desk operations, by their name in `deskRequests`, and why. */
const rpcExceptions: Record<string, string> = {
	OpenWorkspace: "the window's boot: its folders adopted as projects, before anything else is asked",
	GetStatus: "the server process's state, not the desk's",
	RecoverStore: 'the way back from a store the desk could not open: it runs where no desk is open yet',
};

/** `desk` commands that are not the face of an operation, and why. */
const cliExceptions: Record<string, string> = {
	'store pack': "the library folder's upkeep by this process (exit 75 while another packs), not a desk operation",
	'store recover': 'the way back from a store the desk could not open: it runs before a desk is open',
	mcp: "the MCP face itself: it serves the table's tools on stdio",
	'run carry':
		"a run's carrier (glossary: Carrier), started by a desk with the run it hands over on stdin: it carries that run out, which the desk already started",
};

/** A `desk` command by its full name: `asset search`, or a subcommand (`task attachments add`) of a command that has them. */
function commandNamed(name: string): Command | undefined {
	const direct = commands.get(name);
	if (direct) {
		return direct;
	}
	const words = name.split(' ');
	const parent = commands.get(words.slice(0, 2).join(' ')) as
		(Command & { subcommands?: ReadonlyMap<string, Command> }) | undefined;
	return words.length === 3 ? parent?.subcommands?.get(words[2]!) : undefined;
}

/** Every command `desk` runs, subcommands by their full name. */
function allCommands(): Array<[string, Command]> {
	return [...commands].flatMap(([name, command]): Array<[string, Command]> => {
		const subcommands = (command as { subcommands?: ReadonlyMap<string, Command> }).subcommands;
		return subcommands ? [...subcommands].map(([word, sub]) => [`${name} ${word}`, sub]) : [[name, command]];
	});
}

const operationOf = (command: Command) => (command as Partial<OperationCommand>).operation;

/** A schema that takes anything as it is, so a face's call reaches `run` whatever params it was given. */
const anything: Schema<unknown> = { describe: 'anything', json: {}, check: (value) => ({ ok: true, value }) };

describe('the operations table and its faces', () => {
	it('names each operation area.verb, once', () => {
		const names = operations.map((o) => o.name);
		assert.deepEqual(names, [...new Set(names)], 'no name twice');
		for (const name of names) {
			assert.match(name, /^[a-z]+\.[a-zA-Z]+$/, name);
		}
	});

	it('serves every operation with a JSON-RPC method through the operation, for the person in the editor', async () => {
		const served = operations.filter((o) => o.surfaces.rpc);
		assert.ok(served.length >= 25, `${served.length} operations have a method`);
		const desk = {} as Desk;
		const context: HandlerContext = {
			person: async () => ({ name: 'Jane Doe', email: 'jane@example.com' }),
			desk: async () => desk,
			status: () => Promise.reject(new Error('not asked')),
			recoverLibrary: () => Promise.reject(new Error('not asked')),
			notifyAssetsChanged: () => undefined,
			notifySnapshotProgress: () => undefined,
			notifyRunsChanged: () => undefined,
			notifyAttachmentsChanged: () => undefined,
			notifyLineageChanged: () => undefined,
		};
		const handlers = createHandlers(context) as unknown as Record<
			string,
			(params: unknown, signal: AbortSignal) => Promise<unknown>
		>;
		for (const op of served) {
			const rpc = op.surfaces.rpc!;
			const entry = Object.entries(deskRequests).find(([, definition]) => definition === rpc);
			assert.ok(entry, `${op.name}: ${rpc.method} is one of deskRequests`);
			assert.ok(op.callers.includes('editor'), `${op.name}: a JSON-RPC method is the editor's, so it takes the editor`);
			const [name] = entry;
			// The operation's run and schema stand in for a moment: the handler must reach them, with the editor as actor.
			const mutable = op as { -readonly [K in keyof AnyOperation]: AnyOperation[K] };
			const { run, params } = mutable;
			const calls: RunningCall[] = [];
			mutable.run = async (call: RunningCall) => {
				calls.push(call);
				return { served: op.name };
			};
			mutable.params = anything;
			try {
				const answer = await handlers[name]!({ sentinel: true }, new AbortController().signal);
				assert.deepEqual(answer, { served: op.name }, `${rpc.method} answers with ${op.name}`);
			} finally {
				mutable.run = run;
				mutable.params = params;
			}
			assert.equal(calls.length, 1, `${rpc.method} calls ${op.name} once`);
			assert.equal(calls[0]!.desk, desk);
			assert.deepEqual(calls[0]!.actor, { kind: 'editor', person: { name: 'Jane Doe', email: 'jane@example.com' } });
		}
	});

	it('has every JSON-RPC method served by an operation or named an exception, never both', () => {
		for (const [name, definition] of Object.entries(deskRequests)) {
			const op = operations.find((o) => o.surfaces.rpc === definition);
			if (name in rpcExceptions) {
				assert.equal(op, undefined, `${name} is served by ${op?.name}: no longer an exception`);
			} else {
				assert.ok(op, `${definition.method} (${name}) is no operation's face and no documented exception`);
			}
		}
		for (const name of Object.keys(rpcExceptions)) {
			assert.ok(name in deskRequests, `the exception ${name} is a method of the protocol`);
		}
	});

	it('has every operation with a command served by a `desk` command that is its face', () => {
		const withCommand = operations.filter((o) => o.surfaces.cli);
		assert.ok(withCommand.length >= 25, `${withCommand.length} operations have a command`);
		for (const op of withCommand) {
			const command = commandNamed(op.surfaces.cli!);
			assert.ok(command, `${op.name}: desk ${op.surfaces.cli} exists`);
			assert.equal(operationOf(command), op, `desk ${op.surfaces.cli} is the face of ${op.name}`);
			assert.ok(op.callers.includes('cli'), `${op.name}: a command is the command line's, so it takes the cli`);
		}
	});

	it('has every `desk` command the face of an operation of the table or named an exception, never both', () => {
		for (const [name, command] of allCommands()) {
			const op = operationOf(command);
			if (name in cliExceptions) {
				assert.equal(op, undefined, `desk ${name} is the face of ${op?.name}: no longer an exception`);
				continue;
			}
			assert.ok(op, `desk ${name} is no operation's face and no documented exception`);
			assert.ok(operations.includes(op), `desk ${name}: ${op.name} is in the table`);
			assert.ok(op.surfaces.cli, `desk ${name}: ${op.name} declares a command`);
		}
	});

	it('gives every MCP tool a unique snake_case name, a title and a description, and the tools a run needs', () => {
		const tools = operations.flatMap((o) => (o.surfaces.mcp ? [o.surfaces.mcp.tool] : []));
		assert.deepEqual(tools, [...new Set(tools)], 'no tool name twice');
		for (const op of operations.filter((o) => o.surfaces.mcp)) {
			const face = op.surfaces.mcp!;
			assert.match(face.tool, /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/, `${op.name}: ${face.tool}`);
			assert.ok(face.title.length > 0 && face.description.length >= 60, `${face.tool} says what it does`);
			assert.ok(op.callers.includes('agent'), `${face.tool}: a desk tool is an agent's`);
		}
		for (const tool of [
			'asset_search',
			'asset_import',
			'asset_snapshot',
			'asset_version',
			'asset_tags',
			'asset_describe',
			'asset_link',
			'attach',
			'branch',
			'board_post',
			'reports',
			'board_answer',
			'remember',
		]) {
			assert.ok(tools.includes(tool), `the ${tool} tool`);
		}
	});

	it("keeps what an agent must never do out of an agent's reach", () => {
		for (const name of [
			'asset.retire',
			'asset.checks',
			'asset.mount',
			'attachment.delete',
			'asset.sync',
			'lineage.addRoot',
			'lineage.prompt',
			'lineage.branch',
			// Continuing a conversation starts a run: the person's, never an agent's.
			'board.continue',
			// Memory changes only by the person's hand besides remember (which a branch is not even shown).
			'memory.forget',
			'memory.commit',
		]) {
			const op = operations.find((o) => o.name === name);
			assert.ok(op, name);
			assert.ok(!op.callers.includes('agent'), `${name} is not an agent's`);
		}
		for (const op of operations.filter((o) => o.callers.includes('agent'))) {
			assert.ok(op.surfaces.mcp, `${op.name}: an agent reaches operations only as desk tools`);
		}
	});
});
