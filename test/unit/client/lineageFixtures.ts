import type { BoardMessage, LineageRoot } from '../../../server/src/protocol/protocol';
import type { LineageBranch } from '../../../client/src/lineage/lineageText';

/* Roots, branches and board messages as the desk answers them, for the client's lineage tests. */

/** What a repository, a person or an agent could write into a title, a prompt or a report. */
export const hostile =
	'[Land it](command:agentDesk.approveRun?%5B%22shop%22%5D) ![x](https://evil.example/p.png) <b>$(sync~spin)</b>\u202eexe.txt';

export function root(more: Partial<LineageRoot> = {}): LineageRoot {
	return {
		name: 'main',
		about: '',
		listed_at: '2026-12-02T10:00:00Z',
		listed_by: 'desk boot',
		branches: 0,
		live: 0,
		landed: 0,
		memory: { exists: false, memories: 0, uncommitted: false },
		...more,
	};
}

export function branch(id: string, state: LineageBranch['state'], more: Partial<LineageBranch> = {}): LineageBranch {
	return {
		node: {
			node: id,
			kind: 'branch',
			root: 'main',
			fork_of: 'tally-1',
			starter_node: 'task-starter',
			starter_run: 'run-starter',
			grant_chain: [`branch:${id}`, 'root:main', 'ultimate:run-starter'],
			depth: 1,
			config: { agent: 'scripted', template: ['work'], isolation: 'shared' },
			queued: state === 'queued',
			created_at: '2026-12-02T10:05:00Z',
		},
		title: `Branch ${id}`,
		state,
		runs: [{ id: `run-${id}`, status: state === 'landed' ? 'completed' : 'patching' }],
		board: { messages: 3, reports: 1, unanswered: 0, notes: 1 },
		subtree: { tokens: 1200, cost_usd: 0.0125, branches: 1 },
		children: [],
		...more,
	};
}

export function message(seq: number, kind: BoardMessage['kind'], more: Partial<BoardMessage> = {}): BoardMessage {
	return {
		seq,
		id: `m-${seq}`,
		request_id: `req-${seq}`,
		node: 'task-starter',
		kind,
		reply_enabled: kind === 'input',
		passive: kind === 'note',
		frozen: false,
		text: `text ${seq}`,
		created_at: `2026-12-02T10:0${seq}:00Z`,
		...more,
	};
}
