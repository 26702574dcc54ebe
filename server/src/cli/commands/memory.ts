/**
 * `desk memory …`: a project's memory (glossary: Project memory), `.desk-memory/<root>.json`:
 * show, remember, forget, commit and memorize a landing.
 */
import type { MemoryView } from '../../lineage/types';
import type { MemorizeResult } from '../../lineage/types';
import { commitMemory, forgetMemory, memorizeLanding, rememberMemory, showMemory } from '../../operations/memory';
import { readSettingsFile } from './run';
import { usageText } from './runs';
import { expectArgs, UsageError } from '../args';
import type { Command, CommandContext } from '../context';
import { operationCommand } from '../operationCommand';
import { projectOfCommand } from '../projects';
import { terminalSafe as t } from '../terminal';

function args(context: CommandContext, count: number): string[] {
	expectArgs(context.rest, count, context.command);
	return context.rest;
}

export function memoryViewText(view: MemoryView): string {
	const head = `${t(view.path)} · ${view.memories.length} memor${view.memories.length === 1 ? 'y' : 'ies'}${view.exists ? '' : ' (no file yet)'}${view.uncommitted ? ' · uncommitted' : ''}${view.pending > 0 ? ` · ${view.pending} pending` : ''}`;
	const lines = view.memories.map(
		({ id, memory, evidence_changed }) =>
			`  ${t(id)}  ${t(memory.title)}: ${t(memory.text.split('\n')[0] ?? '')}${evidence_changed.length > 0 ? `  (evidence changed: ${evidence_changed.map(t).join(', ')})` : ''}`,
	);
	return [head, ...lines].join('\n');
}

/** `desk memory show ROOT` */
const memoryShow = operationCommand(showMemory, {
	params: async (context) => {
		const [root] = args(context, 1);
		return { project: await projectOfCommand(context), root: root! };
	},
	text: memoryViewText,
});

/** `desk memory remember ROOT TEXT [--title T]` */
const memoryRemember = operationCommand(rememberMemory, {
	params: async (context) => {
		const [root, text] = args(context, 2);
		if (text!.trim() === '') {
			throw new UsageError('memory remember takes the text to remember');
		}
		return {
			project: await projectOfCommand(context),
			root: root!,
			text: text!,
			...(context.values.title !== undefined ? { title: context.values.title } : {}),
		};
	},
	text: (result) => `${result.replayed ? 'remembered before' : 'remembered'}: ${t(result.added)}`,
});

/** `desk memory forget ROOT ID` */
const memoryForget = operationCommand(forgetMemory, {
	params: async (context) => {
		const [root, memory] = args(context, 2);
		return { project: await projectOfCommand(context), root: root!, memory: memory! };
	},
	text: (result) => `${result.replayed ? 'forgotten before' : 'forgotten'}: ${t(result.removed)}`,
});

/** `desk memory commit ROOT` */
const memoryCommit = operationCommand(commitMemory, {
	params: async (context) => {
		const [root] = args(context, 1);
		return { project: await projectOfCommand(context), root: root! };
	},
	text: (result) => `committed ${t(result.commit)}`,
});

/** `desk memory memorize RUN [--settings FILE]`: the summary agent is the settings' lineage.summaryAgent. */
const memoryMemorize = operationCommand(memorizeLanding, {
	params: async (context) => {
		const [run] = args(context, 1);
		return {
			project: await projectOfCommand(context),
			run: run!,
			...(context.values.settings !== undefined ? { settings: readSettingsFile(context.values.settings) } : {}),
		};
	},
	text: memorizeText,
});

function memorizeText(result: MemorizeResult): string {
	if (result.skipped !== undefined) {
		return `memory unchanged: ${t(result.skipped)}${usageText(result.usage)}`;
	}
	const applied = result.applied ?? { added: [], updated: [], removed: [] };
	return `${result.replayed ? 'memorized before' : 'memorized'}: ${applied.added.length} added, ${applied.updated.length} updated, ${applied.removed.length} removed${result.memo_hit ? ' (the summary agent was not asked again)' : ''}${result.retried ? ' (asked twice)' : ''}${usageText(result.usage)}`;
}

export const memoryCommands: ReadonlyArray<[string, Command]> = [
	['memory show', memoryShow],
	['memory remember', memoryRemember],
	['memory forget', memoryForget],
	['memory commit', memoryCommit],
	['memory memorize', memoryMemorize],
];
