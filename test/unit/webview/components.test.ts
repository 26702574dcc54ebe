import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { findProjectRoot } from '../../helpers/temp';

/**
 * The webview UI toolkit stays behind webview/src/components.ts (issue 13): the launch card asks that
 * module for its buttons, text area, tags and badges, so the toolkit can be swapped in one file.
 */
describe("the webview's components", () => {
	it('only components.ts imports the toolkit or names its elements', () => {
		const root = path.join(findProjectRoot(), 'webview', 'src');
		const wrong: string[] = [];
		for (const name of fs.readdirSync(root)) {
			if (!name.endsWith('.ts') || name === 'components.ts') {
				continue;
			}
			const source = fs.readFileSync(path.join(root, name), 'utf8');
			if (/@vscode\/webview-ui-toolkit/.test(source)) {
				wrong.push(`${name} imports the toolkit`);
			}
			for (const element of source.match(/['"`]vscode-[a-z-]+['"`]/g) ?? []) {
				wrong.push(`${name} makes ${element}`);
			}
		}
		assert.deepEqual(wrong, []);
	});
});
