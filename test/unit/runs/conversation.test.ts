import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { parseAll } from '../../../server/src/agents/adapters/index';
import type { AgentOutputFormat } from '../../../server/src/agents/events';
import { sha256Hex } from '../../../server/src/ai/canonical';
import * as m from '../../../server/src/ai/model';
import type { AiObject, ContextFrame, ContextPipeline, ToolInvocation } from '../../../server/src/ai/types';
import { AgentRecorder, inlineMessageChars, type RecorderSink } from '../../../server/src/runs/agentRecorder';
import {
	cappedText,
	cappedToolInput,
	maxMessageBytes,
	maxToolInputTextBytes,
	maxToolOutputBytes,
} from '../../../server/src/runs/artifacts';
import { defaultPrices } from '../../../server/src/runs/prices';
import type { AgentMessageData } from '../../../server/src/runs/types';
import { findProjectRoot } from '../../helpers/temp';

/*
 * What a run records of its agent's conversation (glossary: Conversation), from the agent's output as
 * the adapters read it: its messages as agent_message frames and its tool calls as tool_call frames,
 * in the order it printed them, each call's whole output in the blob store, and what is too long cut
 * with a mark. The real transcripts are the fixtures of test/fixtures/transcripts (SOURCES.md says
 * where each is from); the composed ones take the shape of one beside them.
 */

const transcripts = path.join(findProjectRoot(), 'test/fixtures/transcripts');
const transcript = (name: string) => fs.readFileSync(path.join(transcripts, name), 'utf8');

interface Recording {
	recorder: AgentRecorder;
	/** The latest version of each object the recorder stored, as stored (a copy). */
	stored: Map<string, AiObject>;
	/** The bytes of each artifact stored, by key. */
	blobs: Map<string, Buffer>;
	/** How many times the pipeline was written. */
	pipelineWrites: () => number;
	runId: string;
	pipelineId: string;
}

function recording(options: { node?: string; attempt?: number; scrub?: (text: string) => string } = {}): Recording {
	const system = m.actor('system', 'desk');
	const task = m.newTask(m.actor('human', 'tess'), 'Look around');
	const run = m.newRun(system, task, 'a'.repeat(40));
	m.addRun(task, run);
	const provenance = m.newProvenance(system, run, 'test', 'unknown');
	const pipeline = m.newContextPipeline(system);
	const stored = new Map<string, AiObject>();
	const blobs = new Map<string, Buffer>();
	let writes = 0;
	const sink: RecorderSink = {
		put: (objects) => {
			for (const o of objects) {
				writes += o.object_type === 'context_pipeline' ? 1 : 0;
				stored.set(o.object_id, structuredClone(o));
			}
		},
		storeArtifact: (bytes, type) => {
			const key = sha256Hex(bytes);
			blobs.set(key, Buffer.from(bytes));
			return m.artifactFor(bytes, 'test', key, type);
		},
		scrub: options.scrub ?? ((text) => text),
	};
	const recorder = new AgentRecorder(run, provenance, pipeline, '/work', sink, 'agent', undefined, {
		prices: defaultPrices,
		...(options.node ? { node: options.node } : {}),
		...(options.attempt ? { attempt: options.attempt } : {}),
	});
	return {
		recorder,
		stored,
		blobs,
		pipelineWrites: () => writes,
		runId: run.object_id,
		pipelineId: pipeline.object_id,
	};
}

/** One node's output through its adapter into a recorder, finished. */
function record(format: AgentOutputFormat, output: string, options: Parameters<typeof recording>[0] = {}): Recording {
	const r = recording(options);
	for (const event of parseAll(format, output)) {
		r.recorder.record(event);
	}
	r.recorder.finish({ code: 0, signal: null });
	return r;
}

const pipelineOf = (r: Recording) => r.stored.get(r.pipelineId) as ContextPipeline | undefined;
const callsOf = (r: Recording) =>
	[...r.stored.values()].filter((o): o is ToolInvocation => o.object_type === 'tool_invocation');

/** The conversation as the frames tell it: `said: …` for a message, `call: <tool> → <output>` for a call. */
function conversation(r: Recording): string[] {
	const calls = new Map(callsOf(r).map((c) => [c.object_id, c]));
	return (pipelineOf(r)?.frames ?? []).map((frame: ContextFrame) => {
		if (typeof frame.kind === 'object' && frame.kind.other === 'agent_message') {
			return `said: ${(frame.data as AgentMessageData).text}`;
		}
		const call = calls.get((frame.data as { tool_invocation: string }).tool_invocation)!;
		const output = call.artifacts[0]?.key ? r.blobs.get(call.artifacts[0].key)!.toString('utf8') : '';
		return `call: ${call.tool_name} → ${output.split('\n')[0]}`;
	});
}

describe("the conversation a run records from its agent's output", () => {
	it('codex/orch-readonly-ls: the message before the call, the call with its whole output, and the answer, in order', () => {
		const r = record('codex-json', transcript('codex/orch-readonly-ls.jsonl'), { node: 'work', attempt: 2 });
		assert.deepEqual(conversation(r), [
			'said: I’ll inspect the repository without making changes.',
			'call: shell → .git/COMMIT_EDITMSG',
			'said: README.md, calc.py',
		]);
		const [call] = callsOf(r);
		const output = r.blobs.get(call!.artifacts[0]!.key)!.toString('utf8');
		assert.match(output, /\.git\/hooks\/pre-push\.sample\n/, 'the whole listing, not its first line');
		assert.equal(call!.artifacts[0]!.hash, sha256Hex(Buffer.from(output)));
		const said = pipelineOf(r)!.frames[0]!;
		assert.deepEqual(said.kind, { other: 'agent_message' });
		assert.deepEqual(said.data, {
			run: r.runId,
			node: 'work',
			attempt: 2,
			text: 'I’ll inspect the repository without making changes.',
		});
		assert.equal(said.summary, 'I’ll inspect the repository without making changes.');
		assert.equal((pipelineOf(r)!.frames[1]!.data as { run: string }).run, r.runId, "a call's frame names its run");
	});

	it("claude/agentbench-windows-2.1.245: each call with its output and the agent's own call id, then its answer", () => {
		const r = record('claude-stream-json', transcript('claude/agentbench-windows-2.1.245.jsonl'));
		assert.deepEqual(conversation(r), [
			'call: Write → File created successfully at: C:\\tmp\\cc-stream\\t.txt (file state is current in your context — no need to Read it back)',
			'call: Bash → cc_err.log',
			'said: DONE',
		]);
		const bash = callsOf(r).find((c) => c.tool_name === 'Bash')!;
		assert.deepEqual(bash.args, { command: 'ls', description: 'List files in current directory' });
		assert.equal(r.blobs.get(bash.artifacts[0]!.key)!.toString('utf8'), 'cc_err.log\ncc_stream.jsonl\nt.txt\nws');
		assert.equal(bash.external_ids.tool_use_id, 'toolu_01HDogverAUrhwAcRSEmRJTa');
	});

	it('claude/ritual-toolrich-2.1.205 and codex/takopi-explore-bridge: every message and call is kept, a long answer whole', () => {
		const ritual = record('claude-stream-json', transcript('claude/ritual-toolrich-2.1.205.jsonl'));
		assert.deepEqual(conversation(ritual), ['call: Bash → ritual-fixture', 'said: done']);

		const takopi = record('codex-json', transcript('codex/takopi-explore-bridge.jsonl'));
		const said = conversation(takopi);
		assert.equal(said.filter((s) => s.startsWith('call: ')).length, 15);
		const answer = pipelineOf(takopi)!.frames.at(-1)!;
		const text = (answer.data as AgentMessageData).text;
		assert.match(text, /^- This is a small Python CLI \(`exec-bridge`\)/);
		assert.ok(text.length < inlineMessageChars, 'the answer is short enough to be kept in its frame');
		assert.equal((answer.data as AgentMessageData).artifact, undefined);
		// Codex's own truncation of a long command output is kept as it printed it.
		const outputs = callsOf(takopi).map((c) => r(takopi, c));
		assert.ok(outputs.some((o) => o.includes('Total output lines:')));
	});

	it('scrubs secrets from messages as from everything else it stores', () => {
		const r = record('codex-json', transcript('codex/orch-readonly-ls.jsonl'), {
			scrub: (text) => text.replaceAll('calc.py', '[secret]'),
		});
		assert.ok(conversation(r).includes('said: README.md, [secret]'));
	});
});

/** A call's stored output as text. */
function r(rec: Recording, call: ToolInvocation): string {
	return call.artifacts[0] ? rec.blobs.get(call.artifacts[0].key)!.toString('utf8') : '';
}

/** Codex's lines (codex/orch-readonly-ls's shape) for a message and a command whose output is `output`. */
function codexLines(message: string, output: string, command = 'yes'): string {
	return [
		{ type: 'thread.started', thread_id: '019fea4e-fc67-71f0-b4da-d38860067426' },
		{ type: 'turn.started' },
		{ type: 'item.completed', item: { id: 'item_0', type: 'agent_message', text: message } },
		{
			type: 'item.started',
			item: { id: 'item_1', type: 'command_execution', command, aggregated_output: '', status: 'in_progress' },
		},
		{
			type: 'item.completed',
			item: {
				id: 'item_1',
				type: 'command_execution',
				command,
				aggregated_output: output,
				exit_code: 0,
				status: 'completed',
			},
		},
		{ type: 'turn.completed', usage: { input_tokens: 10, cached_input_tokens: 0, output_tokens: 5 } },
	]
		.map((line) => JSON.stringify(line))
		.join('\n');
}

describe('what is too long is cut, and says so; the run is kept', () => {
	it('a long message keeps its beginning in its frame and the whole in the blob store', () => {
		const message = `${'Step one. '.repeat(600)}\nDone.`;
		const rec = record('codex-json', codexLines(message, 'y\n'));
		const data = pipelineOf(rec)!.frames[0]!.data as AgentMessageData;
		assert.equal(data.text, message.slice(0, inlineMessageChars));
		assert.equal(data.chars, message.length);
		assert.equal(rec.blobs.get(data.artifact!.key)!.toString('utf8'), message);
	});

	it('a message over the cap is stored up to it with the truncated mark', () => {
		const message = 'é'.repeat(maxMessageBytes); // two bytes each: twice the cap
		const rec = record('codex-json', codexLines(message, 'y\n'));
		const whole = rec.blobs.get((pipelineOf(rec)!.frames[0]!.data as AgentMessageData).artifact!.key)!.toString('utf8');
		assert.ok(whole.startsWith('éé'));
		assert.ok(
			whole.endsWith(
				`\n[desk: truncated — the message was ${(2 * maxMessageBytes).toLocaleString('en-US')} bytes; the first ${maxMessageBytes.toLocaleString('en-US')} are kept]\n`,
			),
		);
		assert.ok(!whole.includes('\uFFFD'), 'cut between characters');
	});

	it("a tool call's output over the cap is stored up to it with the truncated mark, and the call still ends ok", () => {
		const output = 'y\n'.repeat(maxToolOutputBytes / 2 + 1000);
		const rec = record('codex-json', codexLines('Printing.', output));
		const [call] = callsOf(rec);
		assert.equal(call!.status, 'ok');
		const stored = r(rec, call!);
		assert.equal(Buffer.byteLength(stored.split('\n[desk: ')[0]!), maxToolOutputBytes);
		assert.match(stored, /\n\[desk: truncated — the output was 4,196,304 bytes; the first 4,194,304 are kept\]\n$/);
	});

	it("each text of a tool call's input over its cap is kept up to it with the truncated mark; the rest of the input as it was", () => {
		// A heredoc writing a 300 KB file: the file is in the run's change, its copy in the record is cut.
		const command = `cat > big.txt <<'EOF'\n${'a line of the file\n'.repeat(16_000)}EOF`;
		const rec = record('codex-json', codexLines('Writing.', 'done\n', command));
		const [call] = callsOf(rec);
		assert.equal(call!.status, 'ok');
		const kept = (call!.args as { command: string }).command;
		assert.ok(kept.startsWith("cat > big.txt <<'EOF'\na line of the file\n"));
		assert.equal(Buffer.byteLength(kept.split('\n[desk: ')[0]!), maxToolInputTextBytes);
		assert.match(kept, /\n\[desk: truncated — the input was 304,025 bytes; the first 65,536 are kept\]\n$/);
		assert.deepEqual(cappedToolInput({ a: ['x', 1, null, { b: 'é'.repeat(10) }], c: true }, 8), {
			a: ['x', 1, null, { b: `${'é'.repeat(4)}\n[desk: truncated — the input was 20 bytes; the first 8 are kept]\n` }],
			c: true,
		});
	});

	it('cappedText cuts between characters and names what was printed past the text it was given', () => {
		assert.deepEqual(cappedText('short', 10, 'log'), { text: 'short', cut: false, bytes: 5 });
		const cut = cappedText('a€€', 5, 'log');
		assert.equal(cut.text, 'a€\n[desk: truncated — the log was 7 bytes; the first 4 are kept]\n');
		assert.equal(
			cappedText('abcdef', 4, 'log', 9_000_000).text,
			'abcd\n[desk: truncated — the log was 9,000,000 bytes; the first 4 are kept]\n',
		);
	});
});

describe('the conversation is stored while the agent works', () => {
	it('a message is in the store at once, the next within a second, both before the node ends', async () => {
		const rec = recording();
		rec.recorder.record({ kind: 'message', text: 'Looking at the code first.' });
		const said = () =>
			(pipelineOf(rec)?.frames ?? []).map((f) => (f.data as Partial<AgentMessageData> | undefined)?.text);
		assert.deepEqual(said(), ['Looking at the code first.']);
		rec.recorder.record({ kind: 'message', text: 'Now the change.' });
		assert.deepEqual(said(), ['Looking at the code first.'], 'the pipeline is not rewritten twice in a second');
		await new Promise((resolve) => setTimeout(resolve, 1200));
		assert.deepEqual(said(), ['Looking at the code first.', 'Now the change.']);
		assert.equal(rec.pipelineWrites(), 2);
		rec.recorder.finish({ code: 0, signal: null });
	});
});
