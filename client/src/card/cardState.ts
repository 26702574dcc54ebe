import type { CardView, SuggestResult } from '../../../server/src/protocol/protocol';
import type { CardState } from '../../../webview/src/messages';
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

/** Which agent Go starts, and where it works, in a few words for the card. */
export function runWith(settings: Record<string, unknown>): string {
	const agents = Array.isArray(settings['agents']) ? (settings['agents'] as Array<{ name?: unknown }>) : [];
	const agent = (typeof settings['agent'] === 'string' && settings['agent']) || agents[0]?.name;
	const where = settings['isolation'] === 'worktree' ? 'a worktree of its own' : 'the shared checkout';
	return typeof agent === 'string'
		? `Go runs agent ${agent} in ${where}`
		: 'No agent is configured (setting agentDesk.agents).';
}
