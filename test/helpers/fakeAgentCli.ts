import * as fs from 'node:fs';
import * as path from 'node:path';
import { findProjectRoot, tempDir } from './temp';

/**
 * A folder holding `claude`, a stand-in for Claude Code's command line
 * (test/fixtures/agents/fake-claude.sh): it prints a version, signs in when run alone, and as an agent
 * says "Not logged in · Please run /login" and exits 1, as the real one does without a sign-in.
 */
export function fakeClaudeFolder(): string {
	const folder = tempDir('desk-fake-claude-');
	const program = path.join(folder, 'claude');
	fs.copyFileSync(path.join(findProjectRoot(), 'test', 'fixtures', 'agents', 'fake-claude.sh'), program);
	fs.chmodSync(program, 0o755);
	return folder;
}

/** Writes Claude Code's sign-in file into `home`, as its /login does. */
export function signInClaude(home: string): void {
	fs.mkdirSync(path.join(home, '.claude'), { recursive: true });
	fs.writeFileSync(
		path.join(home, '.claude', '.credentials.json'),
		JSON.stringify({ claudeAiOauth: { accessToken: 'test-access', refreshToken: 'test-refresh' } }),
	);
}
