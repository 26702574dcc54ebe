import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FirstParentHistory, formatCommitTime, HistoryWalk } from '../../../server/src/git/firstParentHistory';
import { emptyScan, scanCommit } from '../../../server/src/git/objects';

/** The plain model: a Date in UTC shifted by the offset, and the offset written as ±hh:mm. */
function modelTime(timestamp: number, offsetMinutes: number): string {
	const local = new Date((timestamp + offsetMinutes * 60) * 1000).toISOString().slice(0, 19);
	const abs = Math.abs(offsetMinutes);
	return `${local}${offsetMinutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

interface Commit {
	oid: string;
	time: number;
	offsetMinutes: number;
	subject: string;
}

function randomCommits(count: number, seed: number): Commit[] {
	let state = seed;
	const random = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
	const subjects = ['fix: ünïcödé', '', 'a'.repeat(300), 'merge branch “x”', '日本語のコミット', 'emoji 🚀 subject'];
	return Array.from({ length: count }, () => ({
		oid: Array.from({ length: 40 }, () => '0123456789abcdef'[Math.floor(random() * 16)]).join(''),
		time: Math.floor(random() * 4_000_000_000),
		offsetMinutes: Math.round((random() * 28 - 14) * 4) * 15,
		subject: subjects[Math.floor(random() * subjects.length)]!,
	}));
}

/** `commits` (oldest first) as a walk finds them, newest first, each scanned from its object's bytes. */
function walkOf(commits: readonly Commit[]): HistoryWalk {
	const walk = new HistoryWalk(20);
	const scan = emptyScan();
	for (const commit of [...commits].reverse()) {
		const abs = Math.abs(commit.offsetMinutes);
		const zone = `${commit.offsetMinutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}${String(abs % 60).padStart(2, '0')}`;
		const data = Buffer.from(
			`tree ${'4b825dc642cb6eb9a060e54bf8d69288fbee4904'}\ncommitter C <c@example.com> ${commit.time} ${zone}\n\n${commit.subject}\n`,
		);
		assert.ok(scanCommit(data, 20, scan));
		walk.add(Buffer.from(commit.oid, 'hex'), data, scan);
	}
	return walk;
}

describe('first-parent histories', () => {
	it('formats commit times as %cI does, for any time and offset, like the Date-based model', () => {
		let state = 3;
		const random = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
		for (let i = 0; i < 20_000; i++) {
			const timestamp = Math.floor((random() * 2 - 0.5) * 8_000_000_000);
			const offset = Math.round((random() * 28 - 14) * 60);
			assert.equal(formatCommitTime(timestamp, offset), modelTime(timestamp, offset), `${timestamp} ${offset}`);
		}
		assert.equal(formatCommitTime(1_700_000_000, 60), '2023-11-14T23:13:20+01:00');
		assert.equal(formatCommitTime(0, -450), '1969-12-31T16:30:00-07:30');
		assert.equal(formatCommitTime(99_999_999_999_999, 0), '1970-01-01T00:00:00+00:00', 'a time no calendar holds');
		// +9999 and -9999, the widest offsets a commit's four digits hold: 100 hours and 39 minutes.
		assert.equal(formatCommitTime(0, 6039), '1970-01-05T04:39:00+100:39');
		assert.equal(formatCommitTime(0, -6039), '1969-12-27T19:21:00-100:39');
		// Each call answers its own text, though the digits are written into one shared buffer.
		const times = [formatCommitTime(1_700_000_000, 60), formatCommitTime(0, 0)];
		assert.deepEqual(times, ['2023-11-14T23:13:20+01:00', '1970-01-01T00:00:00+00:00']);
	});

	it('keeps every entry through extendWith, encode and decode, and refuses a damaged or foreign file', () => {
		const commits = randomCommits(3000, 11);
		const history = FirstParentHistory.empty(20)
			.extendWith(0, walkOf(commits.slice(0, 2000)), false)
			.extendWith(1500, walkOf(commits.slice(2000)), false);
		const expected = [...commits.slice(0, 1500), ...commits.slice(2000)];
		const decoded = FirstParentHistory.decode(history.encode())!;
		for (const h of [history, decoded]) {
			assert.equal(h.count, expected.length);
			assert.equal(h.tip, expected.at(-1)!.oid);
			for (const [i, c] of expected.entries()) {
				assert.deepEqual(h.entry(i), {
					oid: c.oid,
					committedAt: formatCommitTime(c.time, c.offsetMinutes),
					subject: c.subject,
				});
			}
			assert.equal(h.indexOf(expected[1234]!.oid), 1234);
			assert.equal(h.indexOf('f'.repeat(40)), -1);
		}
		const bytes = history.encode();
		for (const at of [0, 9, 20, 100, bytes.length >> 1, bytes.length - 1]) {
			const damaged = Buffer.from(bytes);
			damaged[at]! ^= 0x01;
			assert.equal(FirstParentHistory.decode(damaged), undefined, `a flipped byte at ${at}`);
		}
		assert.equal(FirstParentHistory.decode(bytes.subarray(0, bytes.length - 5)), undefined, 'a cut file');
		assert.equal(FirstParentHistory.decode(Buffer.from('not a history file at all, not at all')), undefined);
		const empty = FirstParentHistory.decode(FirstParentHistory.empty(32).encode())!;
		assert.equal(empty.count, 0);
		assert.equal(empty.tip, undefined);
		assert.equal(empty.hashLength, 32);
	});
});
