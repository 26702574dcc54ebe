import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import type { Intent, Run } from '../../server/src/ai/types';
import { Desk } from '../../server/src/desk';
import type { LaunchRecord } from '../../server/src/launch/types';
import { isAtGate } from '../../server/src/runs/runViews';
import { recordingLogger } from '../helpers/deskFixture';
import { commitFile, makeRepo } from '../helpers/gitRepo';
import { scriptedAgentSettings } from '../helpers/scriptedAgent';
import { tempDir } from '../helpers/temp';
import { testFaultsVariable } from '../../server/src/core/faults';
import { desk, deskJs } from '../helpers/deskCli';

function startDesk(
	args: string[],
	env: Record<string, string> = {},
): {
	child: ChildProcess;
	done: Promise<{ code: number | null; stdout: string; stderr: string }>;
} {
	const child = spawn(process.execPath, [deskJs, ...args], {
		stdio: ['ignore', 'pipe', 'pipe'],
		env: { ...process.env, DESK_STORE: '', ...env },
	});
	let stdout = '';
	let stderr = '';
	child.stdout!.setEncoding('utf8').on('data', (c: string) => (stdout += c));
	child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
	return { child, done: new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr }))) };
}

function project(): { root: string; store: string; repo: string; settings: string } {
	const root = tempDir();
	const store = path.join(root, 'library');
	const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
	commitFile(repo, 'price.txt', '10\n', 'price');
	assert.equal(desk('--store', store, 'asset', 'import', '--dir', repo, '--project', 'shop', '--main').code, 0);
	const settings = path.join(root, 'settings.json');
	fs.writeFileSync(
		settings,
		JSON.stringify(scriptedAgentSettings({ writes: [{ path: 'price.txt', content: '12\n' }] })),
	);
	return { root, store, repo, settings };
}

/**
 * Launches, runs and the card as the desk holds them, read by a desk of the test's own (runs left by
 * a dead process are failed first, as any desk does); then the card gets `nextTicket` when given.
 */
async function state(store: string, repo: string, nextTicket?: string) {
	const opened = await Desk.open({ libraryDir: store, logger: recordingLogger() });
	try {
		await opened.runs(repo);
		const launches = await opened.launches(repo);
		const ai = await opened.projectAi(repo);
		const seen = {
			records: launches.records(),
			runs: ai.list<Run>('run'),
			intents: ai.list<Intent>('intent'),
			card: launches.card(),
		};
		if (nextTicket !== undefined) {
			launches.setTicket(nextTicket);
		}
		return seen;
	} finally {
		opened.close();
	}
}

/** Every run has its launch and every launch its run; a launched ticket is off the card, one not launched still on it. */
function assertConsistent(
	s: Awaited<ReturnType<typeof state>>,
	ticket: string,
	where: string,
): LaunchRecord | undefined {
	assert.deepEqual(
		s.runs.map((r) => r.object_id).sort(),
		s.records.map((r) => r.run).sort(),
		`${where}: every run has a launch record and every launch its run`,
	);
	assert.deepEqual(
		s.intents.map((i) => i.object_id).sort(),
		s.records.map((r) => r.intent).sort(),
		`${where}: and its intent`,
	);
	const launched = s.records.filter((r) => r.ticket === ticket);
	assert.ok(launched.length <= 1, `${where}: the ticket was launched ${launched.length} times`);
	assert.equal(
		s.card.ticket,
		launched.length === 1 ? '' : ticket,
		`${where}: ${launched.length === 1 ? 'a launched ticket is off the card' : 'a ticket not launched is still on the card'}`,
	);
	for (const run of s.runs) {
		assert.ok(
			run.status === 'failed' || run.status === 'completed' || isAtGate(run),
			`${where}: run ${run.object_id} is ${run.status}, with no process carrying it out`,
		);
	}
	return launched[0];
}

/** Kills `child` as soon as the project journal holds a write naming `marker` (or after `ms` without one). */
async function killWhenWritten(
	child: ChildProcess,
	journal: string,
	marker: string | undefined,
	ms: number,
): Promise<void> {
	const from = fs.existsSync(journal) ? fs.statSync(journal).size : 0;
	const deadline = Date.now() + ms;
	const needle = marker === undefined ? undefined : Buffer.from(marker);
	// Only the bytes appended since the start are read, a millisecond apart: a loop that reads the whole
	// journal without pause holds a core the desk under test needs.
	let seen = Buffer.alloc(0);
	while (Date.now() < deadline && child.exitCode === null) {
		if (needle && fs.existsSync(journal)) {
			const size = fs.statSync(journal).size;
			if (size > from + seen.length) {
				const fd = fs.openSync(journal, 'r');
				try {
					const more = Buffer.alloc(size - from - seen.length);
					const read = fs.readSync(fd, more, 0, more.length, from + seen.length);
					seen = Buffer.concat([seen, more.subarray(0, read)]);
				} finally {
					fs.closeSync(fd);
				}
				if (seen.includes(needle)) {
					break;
				}
			}
		}
		await new Promise((r) => setTimeout(r, needle ? 1 : 5));
	}
	child.kill('SIGKILL');
}

it('desk run go killed at any point leaves a whole launch or none, and Go again launches exactly once', async () => {
	const { store, repo, settings } = project();
	const journal = path.join(repo, '.desk', 'project.db.journal');
	// Killed with the project open and nothing of Go written (its kill point), the moment Go's write reaches
	// the journal, and at a time in the command's life.
	const points: Array<{ marker?: string; fault?: string; ms: number }> = [
		{ fault: 'go.beforeLaunch', ms: 10_000 },
		{ marker: 'ai_objects', ms: 10_000 },
		{ ms: 700 },
	];
	const outcomes: string[] = [];
	const ticketOf = (index: number) => `Raise the price, take ${index + 1}`;
	await state(store, repo, ticketOf(0));
	for (const [index, point] of points.entries()) {
		const ticket = ticketOf(index);
		const going = startDesk(
			['--store', store, 'run', 'go', 'shop', '--settings', settings, '--json'],
			point.fault ? { [testFaultsVariable]: point.fault } : {},
		);
		if (!point.fault) {
			await killWhenWritten(going.child, journal, point.marker, point.ms);
		}
		const ended = await going.done;
		if (point.fault) {
			assert.equal(ended.code, null, `killed at ${point.fault}: ${ended.stderr}`);
		}
		const where = `killed at ${point.fault ?? point.marker ?? `${point.ms} ms`}`;
		const first = assertConsistent(await state(store, repo), ticket, where);
		outcomes.push(first ? 'launched' : 'none');

		const again = desk('--store', store, 'run', 'go', 'shop', '--settings', settings, '--json');
		if (first) {
			assert.equal(again.code, 2, again.stderr);
			assert.match(again.stderr, /Write the ticket before Go/, 'the launched card is empty: nothing is launched twice');
		} else {
			assert.ok(again.code === 0 || again.code === 2, again.stderr);
		}
		assert.ok(
			assertConsistent(await state(store, repo, ticketOf(index + 1)), ticket, `${where}, then Go again`),
			`${where}: Go again launched the ticket`,
		);
	}
	assert.ok(
		outcomes.includes('launched') && outcomes.includes('none'),
		`kills before and after the launch were tried: ${outcomes.join(', ')}`,
	);
});

it('two desk run go at once on one card: one launches and carries its run out, the other is refused and changes nothing', async () => {
	const { store, repo, settings } = project();
	await state(store, repo, 'Raise the price to 12');
	// Both wait for the project database's lock the test holds, then go at the same moment.
	const lock = path.join(repo, '.desk', 'project.db.lock');
	fs.writeFileSync(lock, `${process.pid} held-by-the-test\n`);
	const both = [
		startDesk(['--store', store, 'run', 'go', 'shop', '--settings', settings, '--json']),
		startDesk(['--store', store, 'run', 'go', 'shop', '--settings', settings, '--json']),
	];
	await new Promise((r) => setTimeout(r, 1_000));
	fs.rmSync(lock);
	const results = await Promise.all(both.map((b) => b.done));
	const carried = results.filter((r) => r.code === 0);
	const refused = results.filter((r) => r.code !== 0);
	assert.equal(carried.length, 1, results.map((r) => r.stderr).join('\n'));
	assert.equal(refused.length, 1);
	assert.equal(refused[0]!.code, 2, refused[0]!.stderr);
	const code = (JSON.parse(refused[0]!.stdout) as { error: { code: string } }).error.code;
	assert.ok(
		['launch.cardChanged', 'launch.emptyTicket', 'run.checkoutBusy', 'store.locked'].includes(code),
		refused[0]!.stderr,
	);
	const s = await state(store, repo);
	assert.equal(s.records.length, 1, 'one launch');
	assert.equal(s.runs.length, 1, 'one run, one agent in the checkout');
	assert.equal(fs.readFileSync(path.join(repo, 'price.txt'), 'utf8'), '12\n');
});

it('desk run go and asset version with --request-id: run again, they answer what they did the first time and start or write nothing; the id with other arguments is refused', async () => {
	const { root, store, repo, settings } = project();
	await state(store, repo, 'Raise the price to 12');
	const go = ['--store', store, 'run', 'go', 'shop', '--settings', settings, '--request-id', 'cli-run-0001', '--json'];
	const ran = desk(...go);
	assert.equal(ran.code, 0, ran.stderr);
	const rerun = desk(...go);
	assert.equal(rerun.code, 0, rerun.stderr);
	const runOf = (out: string) => (JSON.parse(out) as { run: { object_id: string } }).run.object_id;
	assert.equal(
		runOf(rerun.stdout),
		runOf(ran.stdout),
		'the same run, not a refusal of the empty card nor a second run',
	);
	const other = desk('--store', store, 'card', 'go', '--project', 'shop', '--request-id', 'cli-run-0001', '--json');
	assert.equal(other.code, 2);
	assert.equal((JSON.parse(other.stdout) as { error: { code: string } }).error.code, 'request.idReused');
	assert.equal(
		desk('--store', store, 'card', 'go', '--project', 'shop', '--request-id', 'no').code,
		64,
		'a request id too short to be one is bad usage',
	);
	assert.equal((await state(store, repo)).runs.length, 1, 'one run in all');

	const made = JSON.parse(desk('--store', store, 'asset', 'import', '--new', 'scratch', '--json').stdout) as {
		asset: { id: string; working_dir: string };
	};
	const src = path.join(root, 'a.md');
	fs.writeFileSync(src, 'first\n');
	const put = [
		'--store',
		store,
		'asset',
		'version',
		made.asset.id,
		'--put',
		`a.md=${src}`,
		'--request-id',
		'cli-vers-0001',
		'--json',
	];
	const version = desk(...put);
	assert.equal(version.code, 0, version.stderr);
	assert.equal((JSON.parse(version.stdout) as { version: { version: number } }).version.version, 2);
	fs.writeFileSync(src, 'second\n');
	const reused = desk(...put);
	assert.equal(reused.code, 2, 'other bytes under the same id are refused');
	assert.equal((JSON.parse(reused.stdout) as { error: { code: string } }).error.code, 'request.idReused');
	assert.equal(
		fs.readFileSync(path.join(made.asset.working_dir, 'a.md'), 'utf8'),
		'first\n',
		'the refused request wrote nothing',
	);
	fs.writeFileSync(src, 'first\n');
	assert.deepEqual(
		JSON.parse(desk(...put).stdout),
		JSON.parse(version.stdout),
		'the same bytes again: the first answer',
	);
});
