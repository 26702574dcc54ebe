import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { downloadPage } from '../../../client/src/attachments/pages';
import {
	markdownLines,
	markdownText,
	messageText,
	pickText,
	visibleText,
} from '../../../client/src/common/markdownText';
import { renderMarkdown } from '../../helpers/markdown';
import { findProjectRoot } from '../../helpers/temp';

/** Names a hostile repository, folder or agent could choose. */
const hostile = [
	'[Fix it](command:workbench.action.terminal.sendSequence?%7B%22text%22%3A%22rm%20-rf%20~%5Cn%22%7D)',
	'<command:agentDesk.approveRun> and <https://evil.example/x>',
	'![pixel](https://evil.example/track.png)',
	'https://evil.example/login www.evil.example',
	'**bold** _em_ `code` ~~gone~~ # heading',
	'cell | break\n\n| a | b |\n|---|---|\n| c | d |',
	'$(sync~spin) $(warning) icons',
	'&lt;b&gt; &#x202e; entities',
	'[ref]: https://evil.example\n[ref]',
	'title\u001b]0;pwned\u0007 and invoice\u202egpj.exe',
	'line one\n===\nsetext',
	'    indented code',
];

/** What VS Code turns into a link in a notification: `[label](https://…|command:…|file:…)`. */
const notificationLink = /\[[^\]]+\]\((?:https?:\/\/|command:|file:)[^)\s]+/i;

function textOf(html: string): string {
	return html
		.replace(/<[^>]+>/g, '')
		.replace(/&lt;/g, '<')
		.replace(/&gt;/g, '>')
		.replace(/&quot;/g, '"')
		.replace(/&amp;/g, '&')
		.trim();
}

describe('untrusted text in VS Code', () => {
	it('a MarkdownString of markdownText renders as one paragraph of the text itself: no link, image, emphasis, code, table, heading or entity', () => {
		for (const name of hostile) {
			const html = renderMarkdown(markdownText(name));
			assert.doesNotMatch(
				html,
				/<(a|img|em|strong|code|table|h\d|s|pre|blockquote|hr)\b/,
				`${JSON.stringify(name)} → ${html}`,
			);
			assert.match(html, /^<p>[^]*<\/p>\n$/, html);
			// VS Code then draws `$(name)` as an icon unless it reads `\$(name)`, which it shows as `$(name)`.
			assert.doesNotMatch(textOf(html), /(^|[^\\])\$\(/, html);
			assert.equal(textOf(html).replace(/\\\$\(/g, '$('), visibleText(name).trim(), JSON.stringify(name));
		}
	});

	it('the old escaping let a newline end a table row and a setext line make a heading', () => {
		// The same names inside a tooltip's table cell, as the Assets view writes them.
		for (const name of ['cell | break\n\n| a | b |\n|---|---|\n| c | d |', 'line one\n===\nsetext']) {
			const html = renderMarkdown(`| | |\n|---|---|\n| Folder | ${markdownText(name)} |\n`);
			assert.equal((html.match(/<tr>/g) ?? []).length, 2, html);
			assert.doesNotMatch(html, /<h\d/);
		}
	});

	it('a note keeps its lines, each inert', () => {
		const html = renderMarkdown(markdownLines('first [x](command:a)\n# second\n\n> third'));
		assert.doesNotMatch(html, /<(a|h\d|blockquote)\b/, html);
		assert.equal(textOf(html).replace(/\s+/g, ' '), 'first [x](command:a) # second > third', html);
	});

	it('a notification message holds no link and no raw control or bidi character', () => {
		for (const name of hostile) {
			const message = messageText(`Agent Desk: landed ‘${name}’ as v3.`);
			assert.doesNotMatch(message, notificationLink, message);
			assert.doesNotMatch(message, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u, message);
		}
		assert.equal(
			messageText('Agent Desk: 3 objects imported.\nSecond line'),
			'Agent Desk: 3 objects imported.\nSecond line',
			'the desk’s own text is unchanged',
		);
	});

	it('a QuickPick item shows $(name) as text (VS Code renders \\$( literally) and controls as escapes', () => {
		assert.equal(pickText('$(warning) fix\u202e'), '\\$(warning) fix\\u202e');
		assert.equal(pickText('plain name'), 'plain name');
	});

	it('an attachment page shows the note an agent or a person wrote with its controls and overrides as escapes', () => {
		const page = downloadPage({
			header: { name: 'report.txt', facts: ['1 KiB'], note: 'see <b>here</b>\u202eexe.txt\u001b[2J' },
			reason: 'no preview',
			nonce: 'n',
		});
		assert.match(page, /see &lt;b&gt;here&lt;\/b&gt;\\u202eexe\.txt\\x1b\[2J/);
		assert.doesNotMatch(page, /[\u001b\u202e]/);
	});

	it('the client shows messages only through messages.ts and trusts no MarkdownString', () => {
		const root = path.join(findProjectRoot(), 'client', 'src');
		const files: string[] = [];
		const walk = (dir: string) => {
			for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
				const full = path.join(dir, entry.name);
				if (entry.isDirectory()) {
					walk(full);
				} else if (entry.name.endsWith('.ts')) {
					files.push(full);
				}
			}
		};
		walk(root);
		for (const file of files) {
			const source = fs.readFileSync(file, 'utf8');
			const rel = path.relative(root, file);
			if (rel !== path.join('common', 'messages.ts')) {
				assert.doesNotMatch(
					source,
					/window\s*\.\s*show(Information|Warning|Error)Message/,
					`${rel} shows a message without messages.ts`,
				);
			}
			assert.doesNotMatch(source, /isTrusted\s*(=|:)\s*(true|\{)/, `${rel} trusts a MarkdownString`);
		}
	});
});
