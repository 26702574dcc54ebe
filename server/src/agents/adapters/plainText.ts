import type { AgentEvent, AgentOutputParser } from '../events';
import { noOutputSummary, shorten } from './shared';

/** The one call a plain-text run makes. */
export const plainTextCallId = 'agent-output';

/**
 * Format `text`: output we cannot read, from any program. All of it becomes one call of the tool
 * "agent output" (summarised by its last non-blank line, usually the verdict) and one message, at
 * the end, when the whole text is known. The runner keeps the output itself as an artifact.
 */
export function createPlainTextParser(): AgentOutputParser {
	const lines: string[] = [];
	return {
		push(line: string): AgentEvent[] {
			lines.push(line.endsWith('\r') ? line.slice(0, -1) : line);
			return [];
		},
		end(): AgentEvent[] {
			const text = lines.join('\n');
			const lastLine = [...lines].reverse().find((line) => line.trim() !== '');
			const events: AgentEvent[] = [
				{
					kind: 'tool_started',
					call_id: plainTextCallId,
					tool: 'agent output',
					args: {},
					paths_read: [],
					paths_written: [],
				},
				{
					kind: 'tool_finished',
					call_id: plainTextCallId,
					status: 'ok',
					summary: lastLine === undefined ? noOutputSummary : shorten(lastLine.trim()),
					output: text,
				},
			];
			if (text.trim() !== '') {
				events.push({ kind: 'message', text });
			}
			lines.length = 0;
			return events;
		},
	};
}
