import type { AgentEvent, AgentOutputFormat, AgentOutputParser } from '../events';
import { ClaudeStreamJson } from './claudeStreamJson';
import { CodexJson } from './codexJson';
import { DeskJsonl } from './deskJsonl';
import { GeminiStreamJson } from './geminiStreamJson';
import { createPlainTextParser } from './plainText';
import { createJsonLinesParser } from './shared';

/** A fresh parser for one run's output in `format`; parsers keep state, so one per run. */
export function createOutputParser(format: AgentOutputFormat): AgentOutputParser {
	switch (format) {
		case 'claude-stream-json':
			return createJsonLinesParser(new ClaudeStreamJson());
		case 'codex-json':
			return createJsonLinesParser(new CodexJson());
		case 'gemini-stream-json':
			return createJsonLinesParser(new GeminiStreamJson());
		case 'desk-jsonl':
			return createJsonLinesParser(new DeskJsonl());
		case 'text':
			return createPlainTextParser();
	}
}

/**
 * The events of a whole output at once (a finished run, a test fixture). Lines end with \n or
 * \r\n; a last line without a newline counts, an empty piece after the final newline does not.
 */
export function parseAll(format: AgentOutputFormat, text: string): AgentEvent[] {
	const parser = createOutputParser(format);
	const lines = text.split(/\r?\n/);
	if (lines[lines.length - 1] === '') {
		lines.pop();
	}
	return [...lines.flatMap((line) => parser.push(line)), ...parser.end()];
}
