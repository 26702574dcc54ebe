import * as path from 'node:path';
import type { Logger } from '../../server/src/core/logger';
import { Desk } from '../../server/src/desk';
import { atExit, tempDir } from './temp';

export interface RecordingLogger extends Logger {
	lines: Array<{ level: string; message: string }>;
	infos(): string[];
}

export function recordingLogger(): RecordingLogger {
	const lines: Array<{ level: string; message: string }> = [];
	const at = (level: string) => (message: string) => void lines.push({ level, message });
	return {
		lines,
		error: at('error'),
		warn: at('warn'),
		info: at('info'),
		debug: at('debug'),
		infos: () => lines.filter((l) => l.level === 'info').map((l) => l.message),
	};
}

/** A desk over a fresh library folder, closed when the test file ends. */
export async function openDesk(
	libraryDir = path.join(tempDir(), 'library'),
	logger: Logger = recordingLogger(),
): Promise<Desk> {
	const desk = await Desk.open({ libraryDir, logger, lockTimeoutMs: 2_000 });
	atExit(() => desk.close());
	return desk;
}
