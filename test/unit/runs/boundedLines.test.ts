import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { boundedLines } from '../../../server/src/runs/boundedLines';

async function collect(
	chunks: Array<string | Buffer>,
	maxLineBytes: number,
): Promise<{ lines: string[]; dropped: number[] }> {
	const lines: string[] = [];
	const dropped: number[] = [];
	for await (const line of boundedLines(
		Readable.from(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c))),
		{ maxLineBytes, onDropped: (n) => dropped.push(n) },
	)) {
		lines.push(line);
	}
	return { lines, dropped };
}

describe('the lines an agent prints', () => {
	it('splits lines across chunks, with CRLF, a multi-byte character cut between chunks, and a last line without newline', async () => {
		const euro = Buffer.from('€');
		const result = await collect(
			[
				'one\r\ntw',
				'o\n',
				Buffer.concat([Buffer.from('a'), euro.subarray(0, 1)]),
				Buffer.concat([euro.subarray(1), Buffer.from('b\n\nlast')]),
			],
			100,
		);
		assert.deepEqual(result, { lines: ['one', 'two', 'a€b', '', 'last'], dropped: [] });
	});

	it('keeps a line of exactly the cap, drops one byte more (counted, not kept) and reads the lines after it', async () => {
		const result = await collect(
			['x'.repeat(10), '\n', 'y'.repeat(6), 'y'.repeat(5), 'y'.repeat(1000), '\nafter\n', 'z'.repeat(11)],
			10,
		);
		assert.deepEqual(result, { lines: ['x'.repeat(10), 'after'], dropped: [1011, 11] });
	});

	it('holds at most the cap of an endless line: 64 MiB streamed through a 1 KiB cap', async () => {
		const piece = Buffer.alloc(1024 * 1024, 'x');
		let held = 0;
		async function* endless(): AsyncGenerator<Buffer> {
			for (let i = 0; i < 64; i++) {
				yield piece;
			}
			yield Buffer.from('\n{"type":"ok"}\n');
		}
		const lines: string[] = [];
		const dropped: number[] = [];
		for await (const line of boundedLines(endless(), { maxLineBytes: 1024, onDropped: (n) => dropped.push(n) })) {
			lines.push(line);
			held = Math.max(held, line.length);
		}
		assert.deepEqual({ lines, dropped, held }, { lines: ['{"type":"ok"}'], dropped: [64 * 1024 * 1024], held: 13 });
	});
});
