/** Catch-up as an operation (glossary: Catch-up, Operation): what a branch's next input would be told. */
import { LineageCatchUp } from '../protocol/protocol';
import { projectTop } from './attachments';
import { operation } from './operation';

export const lineageCatchUp = operation({
	name: 'lineage.catchUp',
	summary: "Show what a branch run's next input would be told of the other branches of its root and of its memory.",
	params: LineageCatchUp.params,
	callers: ['editor', 'cli'],
	mutates: false,
	idempotent: true,
	surfaces: { rpc: LineageCatchUp, cli: 'lineage catch-up' },
	async run(call, { project, run }) {
		// A look, not an input: the baseline is saved only when an input uses the catch-up.
		return (await call.desk.catchUp(projectTop(call.desk, project), run)).section;
	},
});

export const catchUpOperations = [lineageCatchUp];
