/** `desk agent check [NAME]`: whether the agents of the run settings can start (glossary: Agent check). */
import { checkAgents } from '../../operations/agents';
import type { AgentCheck } from '../../runs/types';
import { UsageError } from '../args';
import type { Command } from '../context';
import { operationCommand } from '../operationCommand';
import { terminalSafe as t } from '../terminal';
import { settingsOf } from './run';

/** One agent's check in a few lines: what it is, where, its sign-in, and what to do when it cannot start. */
export function agentCheckText(check: AgentCheck): string {
	const state = !check.program
		? `not installed (${t(check.command)} is not in the PATH's absolute folders)`
		: `${t(check.label)} at ${t(check.program)}; ${check.login === 'signed-in' ? 'signed in' : check.login === 'not-signed-in' ? 'NOT signed in' : 'sign-in unknown'}: ${t(check.login_detail)}`;
	const fixes = check.fixes.map((fix) =>
		fix.kind === 'terminal'
			? `  ${t(fix.title)}: ${t(fix.command)}${fix.hint ? ` (then ${t(fix.hint)})` : ''}`
			: `  ${t(fix.title)}: the setting ${t(fix.setting)}`,
	);
	return [`${t(check.agent)}: ${state}`, ...fixes].join('\n');
}

/** True when the check says the agent cannot start (its program missing, or not signed in). */
export function cannotStart(check: AgentCheck): boolean {
	return !check.program || check.login === 'not-signed-in';
}

/**
 * `desk agent check [NAME] [--settings FILE]`: the agent named, else every agent of the settings (the
 * defaults without --settings), looked at afresh; exit 2 when one cannot start.
 */
const agentCheck = operationCommand(checkAgents, {
	params(context) {
		if (context.rest.length > 1) {
			throw new UsageError('agent check takes at most the name of an agent');
		}
		const name = context.rest[0];
		return {
			settings: settingsOf(context),
			...(name !== undefined ? { agent: name } : { all: true }),
			fresh: true,
		};
	},
	text: ({ agents }) => agents.map(agentCheckText).join('\n'),
	exitCode: ({ agents }) => (agents.some(cannotStart) ? 2 : 0),
});

export const agentCommands: ReadonlyArray<[string, Command]> = [['agent check', agentCheck]];
