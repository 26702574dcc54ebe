/**
 * Entry of the extension-host test suite. VS Code (code-server here, or the desktop build that
 * @vscode/test-electron downloads) loads this module as extensionTestsPath and awaits run(). The
 * results also go to $AGENT_DESK_TEST_REPORT as JSON, because a browser workbench does not
 * forward the extension host's console to the test runner.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';

interface TestResult {
	title: string;
	state: 'passed' | 'failed';
	durationMs?: number;
	error?: string;
}

export function run(): Promise<void> {
	const mocha = new Mocha({ ui: 'bdd', color: false, timeout: 60_000, reporter: 'spec' });
	for (const name of fs.readdirSync(__dirname).sort()) {
		if (name.endsWith('.test.js')) {
			mocha.addFile(path.join(__dirname, name));
		}
	}
	const results: TestResult[] = [];
	const report = process.env['AGENT_DESK_TEST_REPORT'];
	return new Promise((resolve, reject) => {
		const runner = mocha.run((failures) => {
			if (report) {
				fs.writeFileSync(report, JSON.stringify({ failures, results }, null, 2));
			}
			if (failures > 0) {
				reject(new Error(`${failures} extension-host test(s) failed`));
			} else {
				resolve();
			}
		});
		runner.on('pass', (test) => results.push({ title: test.fullTitle(), state: 'passed', durationMs: test.duration }));
		runner.on('fail', (test, error: Error) =>
			results.push({ title: test.fullTitle(), state: 'failed', error: error.stack ?? error.message }),
		);
	});
}
