import type { AgentCheck, CardView, SuggestResult } from '../../../server/src/protocol/protocol';
import type { AgentStatusView, CardState } from '../../../webview/src/messages';
import {
	defaultSkillsDelivery,
	instructionsWords,
	skillsDeliveries,
	type SkillsDelivery,
} from '../../../server/src/runs/instructions';
import { visibleText } from '../common/markdownText';

/* What the launch card's webview is sent, made from the server's answers (no VS Code import). */

/** What the card shows; names and reasons come from the library's assets: their controls and overrides shown as escapes. */
export function cardState(project: string, view: CardView, { suggestions, index }: SuggestResult): CardState {
	return {
		project: visibleText(project),
		ticket: view.card.ticket,
		busy: false,
		plugs: view.plugs.map((p) => {
			const atGo = p.at_go;
			const workingChanges = !('error' in atGo) && atGo.engine === 'snapshot' && atGo.working_changes;
			return {
				id: p.id,
				role: p.role,
				name: visibleText(p.name),
				workingChanges,
				atGo:
					'error' in atGo
						? visibleText(atGo.error)
						: workingChanges
							? `working changes: go would read them as v${atGo.version}`
							: `go would freeze v${atGo.version}`,
			};
		}),
		suggestions: suggestions.map((s) => ({
			id: s.asset_id,
			name: visibleText(s.name),
			role: s.role,
			reason: visibleText(s.reason),
			named: s.named,
			...(s.score !== undefined ? { score: s.score } : {}),
		})),
		...(index.indexed < index.total ? { indexing: { indexed: index.indexed, total: index.total } } : {}),
	};
}

/** Which agent Go starts, where it works and how it receives instructions, in a few words for the card. */
export function runWith(settings: Record<string, unknown>): string {
	const agents = Array.isArray(settings['agents'])
		? (settings['agents'] as Array<{ name?: unknown; format?: unknown; skills?: unknown }>)
		: [];
	const agent = (typeof settings['agent'] === 'string' && settings['agent']) || agents[0]?.name;
	const where = settings['isolation'] === 'worktree' ? 'a worktree of its own' : 'the shared checkout';
	if (typeof agent !== 'string') {
		return 'No agent is configured (setting agentDesk.agents).';
	}
	const skills = skillsOf(agents.find((a) => a.name === agent));
	return `Go runs agent ${agent} in ${where}${skills ? `, instructions ${instructionsWords[skills]}` : ''}`;
}

/**
 * How the agent receives instructions plugs, as the server reads its settings: its `skills`, else
 * the default of its output format; undefined for an agent not configured or a value the server
 * refuses at Go (run.badSettings).
 */
function skillsOf(agent: { format?: unknown; skills?: unknown } | undefined): SkillsDelivery | undefined {
	if (!agent) {
		return undefined;
	}
	if (agent.skills === undefined) {
		return defaultSkillsDelivery(typeof agent.format === 'string' ? agent.format : 'text');
	}
	return skillsDeliveries.find((s) => s === agent.skills);
}

/**
 * The card's agent line from the agent check (glossary: Agent check): what the agent is, whether it can
 * start, and its fixes, the program's words (its version) made inert.
 */
export function agentStatus(check: AgentCheck): AgentStatusView {
	const name = visibleText(check.agent);
	const what = visibleText(check.label);
	const fixes = check.fixes.map((fix) => ({
		title: visibleText(fix.title),
		...(fix.kind === 'terminal'
			? {
					hint: `Opens a terminal running ${visibleText(fix.command)}${fix.hint ? `: ${visibleText(fix.hint)}` : ''}.`,
				}
			: { hint: `Opens the setting ${fix.setting}.` }),
	}));
	if (!check.program) {
		return {
			state: 'missing',
			text: `${name}: ${what} is not installed`,
			detail: `${visibleText(check.command)} is not in the PATH's absolute folders: Go would be refused.`,
			fixes,
		};
	}
	const detail = visibleText(check.login_detail);
	switch (check.login) {
		case 'signed-in':
			return { state: 'ready', text: `${name}: ${what}, signed in`, detail, fixes };
		case 'not-signed-in':
			return {
				state: 'signIn',
				text: `${name}: ${what} is not signed in`,
				detail: `${detail}. A run would stop at once.`,
				fixes,
			};
		default:
			return { state: 'unknown', text: `${name}: ${what}, installed`, detail: `Sign-in: ${detail}.`, fixes };
	}
}
