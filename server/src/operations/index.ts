/** Every desk operation (glossary: Operation): the table the JSON-RPC handlers, `desk` and the MCP tools serve. */
import { agentOperations } from './agents';
import { assetOperations } from './assets';
import { attachmentOperations } from './attachments';
import { boardOperations } from './board';
import { cardOperations } from './card';
import { catchUpOperations } from './catchUp';
import { checkpointOperations } from './checkpoints';
import { endingOperations } from './endings';
import { historyOperations } from './history';
import { lineageOperations } from './lineage';
import { runOperations } from './runs';
import type { Operation } from './operation';
import { proposalOperations } from './proposals';
import { memoryOperations } from './memory';

// The table holds operations of different params; each adapter checks params against the operation's own schema.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyOperation = Operation<any, unknown>;

// One spread an area; each area's file lists its operations.
export const operations: readonly AnyOperation[] = [
	...assetOperations,
	...attachmentOperations,
	...proposalOperations,
	...runOperations,
	...checkpointOperations,
	...endingOperations,
	...cardOperations,
	...agentOperations,
	...historyOperations,
	...lineageOperations,
	...boardOperations,
	...memoryOperations,
	...catchUpOperations,
];

/** The operation named `name` (`asset.search`), or undefined. */
export function operationNamed(name: string): AnyOperation | undefined {
	return operations.find((o) => o.name === name);
}
