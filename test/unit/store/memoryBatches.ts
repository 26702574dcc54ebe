/** The batches the memory store tests apply: one memory remembered by request `remember:<key>`. */
import type { MemoryBatch } from '../../../server/src/lineage/memory';

export function rememberBatch(key: string, id: string): MemoryBatch {
	const at = new Date().toISOString();
	return {
		root: 'main',
		request: `remember:${key}`,
		op: 'remember',
		at,
		by: 'human:test',
		request_hash: `hash-${key}`,
		ops: [
			{
				op: 'add',
				id,
				memory: {
					title: `Memory ${key}`,
					text: `Remembered as ${key}.`,
					created_at: at,
					updated_at: at,
					created_by: { kind: 'human', id: 'test' },
					source: { kind: 'remember' },
				},
			},
		],
	};
}
