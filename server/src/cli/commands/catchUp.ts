/** `desk lineage catch-up RUN` (glossary: Catch-up): what a branch run's next input would be told. */
import type { CatchUpSection } from '../../lineage/types';
import { lineageCatchUp } from '../../operations/catchUp';
import { oneId } from '../args';
import type { Command } from '../context';
import { operationCommand } from '../operationCommand';
import { projectOfCommand } from '../projects';
import { terminalSafe as t, terminalSafeLines } from '../terminal';

const lineageCatchUpCommand = operationCommand(lineageCatchUp, {
	async params(context) {
		return { project: await projectOfCommand(context), run: oneId(context.rest, context.command) };
	},
	text: formatCatchUp,
});

export const catchUpCommands: ReadonlyArray<[string, Command]> = [['lineage catch-up', lineageCatchUpCommand]];

function formatCatchUp(section: CatchUpSection): string {
	const tip = section.tip === undefined ? 'no commit' : section.tip.slice(0, 12);
	const moved = section.walked ? 'moved since its last input (walked)' : 'as at its last input (no walk)';
	// The sections are stored text from people and other runs: shown with their lines, every control escaped.
	const sections = [section.memory, section.tally].filter((s) => s.trim() !== '').map((s) => terminalSafeLines(s));
	return [
		`branch ${t(section.node)} of ${t(section.root)}: ${t(section.ref)} at ${tip}, ${moved}`,
		...(sections.length > 0 ? sections : ['nothing to tell of other branches yet']),
	].join('\n\n');
}
