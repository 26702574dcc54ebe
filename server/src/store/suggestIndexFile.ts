import * as fs from 'node:fs';
import type { SuggestIndexFile } from '../launch/ports';
import { writeFileDurably, writeFileDurablyFrom } from './durableFile';

/** A project's suggestion index on disk (`<repo>/.desk/suggest-index.json`), written durably. */
export class NodeSuggestIndexFile implements SuggestIndexFile {
	constructor(readonly name: string) {}

	async read(): Promise<string | undefined> {
		try {
			return await fs.promises.readFile(this.name, 'utf8');
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
				return undefined;
			}
			throw error;
		}
	}

	write(text: string): void {
		writeFileDurably(this.name, Buffer.from(text));
	}

	async writeFrom(chunks: AsyncIterable<string>, abandon: () => boolean): Promise<void> {
		await writeFileDurablyFrom(this.name, chunks, abandon);
	}
}
