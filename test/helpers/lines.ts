import type { Readable } from 'node:stream';

/** Calls `onLine` for each whole line a child process prints (a line split across chunks is joined first). */
export function onLines(stream: Readable, onLine: (line: string) => void): void {
	let buffer = '';
	stream.setEncoding('utf8');
	stream.on('data', (chunk: string) => {
		buffer += chunk;
		const lines = buffer.split('\n');
		buffer = lines.pop()!;
		for (const line of lines) {
			onLine(line);
		}
	});
}
