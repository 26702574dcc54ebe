/**
 * The agents of the run settings (glossary: Agent check): whether each can start, told before Go. A
 * person asks, in the editor (the launch card) or at the command line; an agent inside a run never does.
 */
import { CheckAgents } from '../protocol/protocol';
import { agentsToCheck, checkAgent } from '../runs/agentCheck';
import { sandboxStatus } from '../runs/sandbox';
import { parseRunSettings } from '../runs/settings';
import { operation } from './operation';

export const checkAgents = operation({
	name: 'agent.check',
	summary: 'Tell whether agents can start: the program on the PATH, its version and its sign-in.',
	params: CheckAgents.params,
	callers: ['editor', 'cli'],
	mutates: false,
	idempotent: true,
	surfaces: { rpc: CheckAgents, cli: 'agent check' },
	async run(_call, { settings, agent, all, fresh }) {
		const parsed = parseRunSettings(settings);
		const agents = agentsToCheck(parsed, {
			...(agent !== undefined ? { agent } : {}),
			...(all ? { all } : {}),
		});
		// As a run would start it: in the sandbox (its own home) unless the sandbox is off or cannot work here.
		const sandboxed = parsed.sandbox !== 'off' && sandboxStatus().available;
		return {
			agents: await Promise.all(agents.map((a) => checkAgent(a, { sandboxed, ...(fresh ? { fresh } : {}) }))),
		};
	},
});

/** The agents' operations, in the table's order. */
export const agentOperations = [checkAgents];
