import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { readInputFile } from '../../../server/src/cli/files';
import { isDeskError } from '../../../server/src/core/errors';
import { tempDir } from '../../helpers/temp';

describe('files the command line reads', () => {
	it('reads a regular file (also through a link) up to its cap, exactly', () => {
		const dir = tempDir();
		const file = path.join(dir, 'ticket.md');
		fs.writeFileSync(file, 'x'.repeat(1024));
		assert.equal(readInputFile(file, 'the ticket file', 1024).length, 1024);
		fs.symlinkSync(file, path.join(dir, 'link.md'));
		assert.equal(readInputFile(path.join(dir, 'link.md'), 'the ticket file', 1024).toString(), 'x'.repeat(1024));
		assert.equal(readInputFile(path.join(dir, 'link.md'), 'the ticket file', 4096 * 1024).length, 1024);
	});

	it('refuses a file one byte over the cap, naming it and the cap', () => {
		const dir = tempDir();
		const file = path.join(dir, 'big.md');
		fs.writeFileSync(file, 'x'.repeat(1025));
		assert.throws(
			() => readInputFile(file, 'the ticket file', 1024),
			(e) =>
				isDeskError(e, 'input.tooLarge') &&
				e.data['file'] === file &&
				e.data['limit'] === 1024 &&
				/the ticket file .*big\.md is over the limit of 1\.0 KiB/i.test(e.message),
		);
	});

	it('refuses /dev/zero, a folder and a FIFO by what they are, without reading or waiting', () => {
		const dir = tempDir();
		assert.throws(
			() => readInputFile('/dev/zero', 'the ticket file', 256 * 1024),
			(e) => isDeskError(e, 'input.notAFile') && e.data['kind'] === 'a character device',
		);
		assert.throws(
			() => readInputFile(dir, 'the ticket file', 1024),
			(e) => isDeskError(e, 'input.notAFile') && e.data['kind'] === 'a folder',
		);
		const fifo = path.join(dir, 'pipe');
		execFileSync('mkfifo', [fifo]);
		// With no writer, a plain open of a FIFO would block this test forever.
		assert.throws(
			() => readInputFile(fifo, 'the file to put', 1024),
			(e) => isDeskError(e, 'input.notAFile') && e.data['kind'] === 'a FIFO (named pipe)' && e.data['file'] === fifo,
		);
	});

	it('refuses a missing or unreadable file with input.unreadable and the errno', () => {
		const dir = tempDir();
		assert.throws(
			() => readInputFile(path.join(dir, 'missing'), 'the settings file', 1024),
			(e) => isDeskError(e, 'input.unreadable') && e.data['errno'] === 'ENOENT',
		);
	});
});
