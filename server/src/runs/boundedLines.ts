/**
 * The lines an agent prints, with a cap on each. `readline` keeps a line in memory until its newline
 * comes: an agent that prints one endless line would grow the desk until it dies (a line over V8's
 * longest string, about 512 MiB, threw inside the stream and ended the process). Here a line longer
 * than `maxLineBytes` is dropped as it streams (its bytes are counted, not kept) and reported once
 * its newline (or the end) comes; the lines after it are read as usual.
 */
export async function* boundedLines(
	input: AsyncIterable<Buffer | string>,
	options: { maxLineBytes: number; onDropped?: (bytes: number) => void },
): AsyncGenerator<string> {
	const max = options.maxLineBytes;
	let parts: Buffer[] = [];
	let size = 0;
	/** Bytes of the line being dropped, or -1 while the line is kept. */
	let dropped = -1;
	const line = (): string => {
		const text = Buffer.concat(parts, size).toString('utf8');
		return text.endsWith('\r') ? text.slice(0, -1) : text;
	};
	for await (const raw of input) {
		const chunk = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
		let start = 0;
		while (start <= chunk.length) {
			const newline = chunk.indexOf(10, start);
			const end = newline === -1 ? chunk.length : newline;
			const piece = chunk.subarray(start, end);
			if (dropped >= 0) {
				dropped += piece.length;
			} else if (size + piece.length > max) {
				dropped = size + piece.length;
				parts = [];
				size = 0;
			} else if (piece.length > 0) {
				parts.push(piece);
				size += piece.length;
			}
			if (newline === -1) {
				break;
			}
			if (dropped >= 0) {
				options.onDropped?.(dropped);
			} else {
				yield line();
			}
			parts = [];
			size = 0;
			dropped = -1;
			start = newline + 1;
		}
	}
	if (dropped >= 0) {
		options.onDropped?.(dropped);
	} else if (size > 0) {
		yield line();
	}
}
