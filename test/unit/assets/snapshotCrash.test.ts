import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { it } from 'node:test';
import { silentLogger } from '../../../server/src/core/logger';
import { Desk } from '../../../server/src/desk';
import { BlobStore } from '../../../server/src/store/blobStore';
import { onLines } from '../../helpers/lines';
import { tempDir } from '../../helpers/temp';

it('a snapshotting process killed at random points leaves no partial blob, no version without its blobs, and every acknowledged version intact', async (t) => {
	const libraryDir = path.join(tempDir(), 'library');
	let desk = await Desk.open({ libraryDir, logger: silentLogger });
	const { asset } = await desk.library.newAsset({ name: 'crashy', madeBy: 'user' });
	desk.close();
	const acked = new Map<number, string>();
	const started = Date.now();
	let kills = 0;
	// Twelve kills at least, and on with more until five versions were acknowledged (a loaded machine
	// snapshots slower, so a kill timed from the start could land before every acknowledgement).
	for (let round = 0; (round < 12 || acked.size < 5) && Date.now() - started < 90_000; round++) {
		// Odd rounds time the kill from the first acknowledgement, so some versions are always acknowledged.
		const killFrom = round % 2 === 0 ? 'open' : 'first ack';
		for (const [version, manifest] of await runAndKill(
			libraryDir,
			asset.id,
			round * 1000,
			killFrom,
			50 + Math.random() * 400,
		)) {
			acked.set(version, manifest);
		}
		kills++;
		desk = await Desk.open({ libraryDir, logger: silentLogger });
		try {
			const versions = await desk.library.assetVersions(asset.id);
			for (const [version, manifest] of acked) {
				const found = versions.find((v) => v.version === version);
				assert.ok(
					found?.engine === 'snapshot' && found.manifest === manifest,
					`acknowledged v${version} is not intact`,
				);
			}
			// Every version's manifest and every file it names are in the store and whole.
			for (const v of versions) {
				const { files } = await desk.library.files(asset.id, v.version);
				for (const file of files) {
					assert.equal(desk.blobs.get(file.hash).length, file.size);
				}
			}
		} finally {
			desk.close();
		}
	}
	// No blob under its final name is partial: each, packed or loose, reads back verified.
	const store = new BlobStore(path.join(libraryDir, 'blobs'));
	const blobs = store.list();
	for (const hash of blobs) {
		assert.equal(createHash('sha256').update(store.get(hash)).digest('hex'), hash);
	}
	store.close();
	t.diagnostic(`${acked.size} acknowledged versions over ${kills} kills, ${blobs.length} blobs verified`);
	assert.ok(acked.size >= 5, `only ${acked.size} versions were acknowledged; the test proved little`);
});

function runAndKill(
	libraryDir: string,
	assetId: string,
	start: number,
	killFrom: 'open' | 'first ack',
	killAfterMs: number,
): Promise<Array<[number, string]>> {
	return new Promise((resolve, reject) => {
		const child = spawn(
			process.execPath,
			[path.join(__dirname, 'snapshotWriter.js'), libraryDir, assetId, String(start)],
			{ stdio: ['ignore', 'pipe', 'inherit'] },
		);
		const acked: Array<[number, string]> = [];
		let timer: NodeJS.Timeout | undefined;
		onLines(child.stdout, (line) => {
			if (line === 'open' && killFrom === 'open') {
				timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
			} else if (line.startsWith('ack ')) {
				const [, version, manifest] = line.split(' ');
				acked.push([Number(version), manifest!]);
				if (killFrom === 'first ack' && acked.length === 1) {
					timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
				}
			}
		});
		child.on('error', reject);
		child.on('exit', (code, signal) => {
			clearTimeout(timer);
			if (signal === 'SIGKILL') {
				resolve(acked);
			} else {
				reject(new Error(`the snapshot writer exited by itself (code ${code})`));
			}
		});
	});
}
