/**
 * The MCP server over a dispatcher, with the SDK's own client over an in-memory pair: what the
 * harness says of a call (its tool-use id in `_meta`) reaches the dispatcher, and outcomes become
 * results an agent reads (structured content an object, the text its JSON, refusals `isError`).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import type { DeskTool, ToolCallMeta, ToolDispatcher, ToolOutcome } from '../../../server/src/mcp/dispatcher';
import { deskMcpServer, toolResult } from '../../../server/src/mcp/server';

const echo: DeskTool = {
	name: 'echo',
	title: 'Echo',
	description: 'Answers what it was given.',
	inputSchema: { type: 'object', properties: { say: { type: 'string' } }, additionalProperties: false },
	annotations: { readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
};

describe('the desk MCP server', () => {
	it("passes the harness's id of a call to the dispatcher, under any of the names harnesses use", async () => {
		const seen: Array<{ name: string; args: unknown; meta: ToolCallMeta }> = [];
		const dispatcher: ToolDispatcher = {
			tools: () => Promise.resolve([echo]),
			call: (name, args, meta) => {
				seen.push({ name, args, meta });
				return Promise.resolve({ ok: true, result: { said: args }, replayed: false });
			},
		};
		const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
		await deskMcpServer(dispatcher).connect(serverSide);
		const client = new Client({ name: 'test', version: '1' });
		await client.connect(clientSide);
		try {
			assert.deepEqual(
				(await client.listTools()).tools.map((t) => t.name),
				['echo'],
			);
			await client.callTool({ name: 'echo', arguments: { say: 'a' }, _meta: { 'claudecode/toolUseId': 'toolu_1' } });
			await client.callTool({ name: 'echo', arguments: { say: 'b' }, _meta: { tool_use_id: 'call_2' } });
			await client.callTool({ name: 'echo', arguments: { say: 'c' }, _meta: { toolUseId: 'x'.repeat(300) } });
			await client.callTool({ name: 'echo' });
			assert.deepEqual(
				seen.map(({ name, args, meta: { signal: _signal, ...meta } }) => [name, args, meta]),
				[
					['echo', { say: 'a' }, { harnessCallId: 'toolu_1' }],
					['echo', { say: 'b' }, { harnessCallId: 'call_2' }],
					['echo', { say: 'c' }, {}],
					['echo', {}, {}],
				],
			);
		} finally {
			await client.close();
		}
	});

	it('gives a result as an object in structuredContent and as JSON text; a refusal as isError', () => {
		const ok = (result: unknown, replayed = false): ToolOutcome => ({ ok: true, result, replayed });
		assert.deepEqual(toolResult(ok({ hits: [] })), {
			content: [{ type: 'text', text: '{"hits":[]}' }],
			structuredContent: { hits: [] },
		});
		assert.deepEqual(toolResult(ok([1, 2])).structuredContent, { items: [1, 2] });
		assert.deepEqual(toolResult(ok('done')).structuredContent, { value: 'done' });
		assert.deepEqual(toolResult(ok(undefined)).structuredContent, { value: null });
		assert.deepEqual(toolResult(ok({ a: 1 }, true))._meta, { 'desk/replayed': true });
		const error = { code: 'asset.notFound' as const, message: 'No asset a-1.', data: { id: 'a-1' } };
		assert.deepEqual(toolResult({ ok: false, error }), {
			isError: true,
			content: [{ type: 'text', text: 'asset.notFound: No asset a-1.' }],
			structuredContent: { error },
		});
	});
});
