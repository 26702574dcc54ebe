/** Every desk operation (glossary: Operation): the table the JSON-RPC handlers, `desk` and the MCP tools serve. */
import { searchAssets, setTags } from './assets';
import type { Operation } from './operation';

// The table holds operations of different params; each adapter checks params against the operation's own schema.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyOperation = Operation<any, unknown>;

export const operations: readonly AnyOperation[] = [searchAssets, setTags];

/** The operation named `name` (`asset.search`), or undefined. */
export function operationNamed(name: string): AnyOperation | undefined {
	return operations.find((o) => o.name === name);
}
