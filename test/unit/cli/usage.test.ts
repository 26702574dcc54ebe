import * as assert from 'node:assert/strict';
import { it } from 'node:test';
import { commands } from '../../../server/src/cli/commands';
import { usage } from '../../../server/src/cli/usage';

it('desk --help names every command the command line runs, and only those', () => {
	// A command's line starts with its name (`  asset show ID`, `  mcp`); `asset retire ID | asset unretire ID` names two.
	const named = new Set(
		usage
			.split('\n')
			.flatMap((line) => [...line.matchAll(/(?:^ {2}|\| )([a-z]+(?: [a-z-]+)?)(?= |$)/g)].map((m) => m[1]!)),
	);
	assert.deepEqual([...named].sort(), [...commands.keys()].sort());
});
