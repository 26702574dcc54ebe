import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { makeRepo } from '../helpers/gitRepo';
import { tempDir } from '../helpers/temp';
import { desk } from '../helpers/deskCli';

describe('a file given to the command line that is not UTF-8', () => {
	it('is refused as input.notUtf8 naming the file, never stored with U+FFFD in place of its bytes', () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
		const imported = desk('--store', store, 'asset', 'import', '--dir', repo, '--project', 'shop', '--main', '--json');
		assert.equal(imported.code, 0, imported.stderr);
		const assetId = (JSON.parse(imported.stdout) as { asset: { id: string } }).asset.id;
		const bad = path.join(root, 'ticket.txt');
		fs.writeFileSync(
			bad,
			Buffer.concat([Buffer.from('Fix the caf', 'utf8'), Buffer.from([0xe9]), Buffer.from(' menu', 'utf8')]),
		);

		const suggest = desk('--store', store, 'card', 'suggest', '--project', 'shop', '--ticket-file', bad, '--json');
		assert.equal(suggest.code, 2, suggest.stderr);
		const error = (JSON.parse(suggest.stdout) as { error: { code: string; data: { file: string } } }).error;
		assert.equal(error.code, 'input.notUtf8');
		assert.equal(error.data.file, bad);
		const card = desk('--store', store, 'card', 'show', '--project', 'shop', '--json');
		assert.equal((JSON.parse(card.stdout) as { ticket: string }).ticket, '', 'the ticket was not stored');

		const checks = path.join(root, 'checks.json');
		fs.writeFileSync(
			checks,
			Buffer.concat([
				Buffer.from('[{"name":"t', 'utf8'),
				Buffer.from([0xff]),
				Buffer.from('","command":["true"]}]', 'utf8'),
			]),
		);
		const set = desk('--store', store, 'asset', 'checks', assetId, '--file', checks, '--json');
		assert.equal(set.code, 2, set.stderr);
		assert.equal((JSON.parse(set.stdout) as { error: { code: string } }).error.code, 'input.notUtf8');
	});
});
