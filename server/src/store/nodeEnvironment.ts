import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Environment, PathInfo } from '../assets/ports';

/** The real clock, random asset ids and the real file system. */
export const nodeEnvironment: Environment = {
	now: () => new Date(),
	newAssetId: () => `a-${randomBytes(8).toString('hex')}`,
	async inspectPath(p: string): Promise<PathInfo> {
		try {
			const real = await fs.promises.realpath(p);
			const stat = await fs.promises.stat(real);
			return { kind: stat.isDirectory() ? 'directory' : stat.isFile() ? 'file' : 'other', real };
		} catch {
			return { kind: 'missing' };
		}
	},
	baseName: (p: string) => path.basename(p),
};
