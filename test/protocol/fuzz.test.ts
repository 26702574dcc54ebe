/**
 * A seeded fuzz of the JSON-RPC surface over the real server process: every declared method with
 * wrong types, missing and unknown fields, huge strings, deep nesting, prototype keys (`__proto__`,
 * `constructor`, `prototype`), lone surrogates, relative paths, positional and null params, invalid
 * UTF-8 bodies and unknown methods. Every message carries at least one violation, so each must be
 * refused with a typed error (never an internal error, never a success); the store must be unchanged,
 * the server must answer between batches, and no built-in prototype of the server process may change
 * (checked inside the server by `prototypeProbe`).
 *
 * DESK_FUZZ_SEED=<n> replays a run; the seed of each run is printed. The run is bounded by a message
 * count and a time budget, whichever comes first.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ErrorCodes } from 'vscode-languageserver/node';
import {
	deskRequests,
	ProtocolError,
	protocolErrorExitCode,
	GetCard,
	GetStatus,
	ListAssets,
	ListAttachments,
	ListRuns,
	OpenWorkspace,
	type DeskErrorJson,
} from '../../server/src/protocol/protocol';
import type { Schema, Shape } from '../../server/src/protocol/schema';
import { makeRepo } from '../helpers/gitRepo';
import { killStartedServers, startServer, type RawAnswer, type RunningServer } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';

after(killStartedServers);

const seed = Number(process.env['DESK_FUZZ_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
const maxMessages = 3000;
const budgetMs = 20_000;
const batchSize = 25;

/** mulberry32: a small seeded generator, so a failing run can be replayed. */
function generator(start: number): () => number {
	let a = start >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

type Field = Schema<unknown> | { optional: Schema<unknown> };
const schemaOf = (field: Field): Schema<unknown> => ('optional' in field ? field.optional : field);
const isOptional = (field: Field): boolean => 'optional' in field;

/** One message to send: JSON text built by hand (so `__proto__` stays a key), or raw bytes. */
interface Probe {
	id: string;
	label: string;
	method: string;
	body?: string;
	bytes?: Buffer;
	/** The error codes that may answer it. */
	expect: number[];
}

const deep = (depth: number, open: string, close: string, leaf = '1') =>
	open.repeat(depth) + leaf + close.repeat(depth);

class Fuzzer {
	private readonly random: () => number;
	private hugeLeft = 6;
	next = 0;

	constructor(
		seed: number,
		private readonly project: string,
	) {
		this.random = generator(seed);
	}

	pick<T>(items: readonly T[]): T {
		return items[Math.floor(this.random() * items.length)]!;
	}

	chance(p: number): boolean {
		return this.random() < p;
	}

	id(): string {
		return `fz-${this.next++}`;
	}

	/** A value that passes `schema` (or at least has its type); used for the fields not being broken. */
	valid(schema: Schema<unknown>): string {
		if (schema.shape) {
			const entries = Object.entries(schema.shape).filter(([, f]) => !isOptional(f) || this.chance(0.5));
			return `{${entries.map(([k, f]) => `${JSON.stringify(k)}:${this.validFor(k, schemaOf(f))}`).join(',')}}`;
		}
		if (schema.item) {
			return this.chance(0.5) ? '[]' : `[${this.valid(schema.item)}]`;
		}
		switch (schema.describe) {
			case 'absolute path':
				return JSON.stringify(`/nonexistent/desk-fuzz/${this.next}`);
			case 'string':
				return JSON.stringify(
					this.pick(['x', 'webshop', 'a-0000000000000000', 'refs/desk/history', 'reference', 'commit', '']),
				);
			case 'integer':
				return String(this.pick([1, 2, 64]));
			case 'boolean':
				return this.pick(['true', 'false']);
			case 'json':
				return this.pick(['{}', '[]', '{"a":1}', deep(60, '[', ']')]);
			default:
				return '{}';
		}
	}

	private validFor(key: string, schema: Schema<unknown>): string {
		return key === 'project' && schema.describe === 'string' ? JSON.stringify(this.project) : this.valid(schema);
	}

	/** A value that `schema` must refuse, with what kind of break it is. */
	broken(schema: Schema<unknown>): { text: string; kind: string } {
		const describe = schema.describe;
		const wrongTypes = [
			'5',
			'-1.5',
			'true',
			'null',
			'{}',
			'[]',
			'"s"',
			deep(10_000, '{"a":', '}'),
			deep(10_000, '[', ']'),
			'{"__proto__":{"polluted":1}}',
			'{"constructor":{"prototype":{"polluted":1}}}',
		];
		const options: Array<() => { text: string; kind: string }> = [];
		if (describe === 'string' || describe === 'absolute path') {
			options.push(() => ({ text: this.pick(wrongTypes.filter((t) => t !== '"s"')), kind: 'wrong type' }));
			options.push(() => ({ text: JSON.stringify(`p\ud800${this.pick(['', 'x'])}`), kind: 'lone surrogate' }));
			options.push(() => ({ text: JSON.stringify(`\udc00`), kind: 'lone surrogate' }));
			options.push(() => ({ text: JSON.stringify('y'.repeat(this.pick([300_000, 1_000_000]))), kind: 'long string' }));
			if (this.hugeLeft > 0) {
				options.push(() => {
					this.hugeLeft--;
					return { text: JSON.stringify('z'.repeat(10 * 1024 * 1024)), kind: '10 MB string' };
				});
			}
			if (describe === 'absolute path') {
				options.push(() => ({
					text: JSON.stringify(this.pick(['relative', './x', '../../etc', 'C:relative', '~/x'])),
					kind: 'relative path',
				}));
			}
		} else if (describe === 'integer') {
			options.push(() => ({
				text: this.pick([
					'"1"',
					'1.5',
					'1e400',
					'9007199254740993',
					'-9007199254740993',
					'true',
					'null',
					'{}',
					'[]',
					'[1]',
				]),
				kind: 'wrong type',
			}));
		} else if (describe === 'boolean') {
			options.push(() => ({ text: this.pick(['"true"', '0', '1', 'null', '{}', '[]']), kind: 'wrong type' }));
		} else if (describe === 'json') {
			options.push(() => ({ text: JSON.stringify({ big: 'j'.repeat(300_000) }), kind: 'json over its size' }));
			options.push(() => ({
				text: this.pick([
					deep(65 + Math.floor(this.random() * 10_000), '[', ']'),
					deep(65 + Math.floor(this.random() * 10_000), '{"a":', '}'),
				]),
				kind: 'json nested too deep',
			}));
		} else if (schema.item) {
			options.push(() => ({
				text: this.pick(['{}', '"x"', '5', 'null', '{"0":"a","length":1}']),
				kind: 'not an array',
			}));
			options.push(() => ({ text: `[${this.broken(schema.item!).text}]`, kind: 'bad item' }));
			options.push(() => ({
				text: `[${Array.from({ length: 5000 }, () => this.valid(schema.item!)).join(',')}]`,
				kind: 'too many items',
			}));
		} else if (schema.shape) {
			options.push(() => ({ text: this.pick(['[]', '"x"', '5', 'null']), kind: 'not an object' }));
			options.push(() => ({ text: this.breakObject(schema.shape!), kind: 'bad nested object' }));
		}
		return this.pick(options)();
	}

	/** An object text for `shape` with one violation in it (a field broken, a required one missing, an unknown one added). */
	breakObject(shape: Shape): string {
		const entries = Object.entries(shape) as Array<[string, Field]>;
		const required = entries.filter(([, f]) => !isOptional(f));
		const modes = ['break', 'extra', ...(required.length > 0 ? ['missing'] : [])];
		const mode = entries.length === 0 ? 'extra' : this.pick(modes);
		const fields: string[] = [];
		const target = mode === 'break' ? this.pick(entries)[0] : mode === 'missing' ? this.pick(required)[0] : undefined;
		for (const [key, field] of entries) {
			if (key === target) {
				if (mode === 'break') {
					fields.push(`${JSON.stringify(key)}:${this.broken(schemaOf(field)).text}`);
				}
				continue;
			}
			if (!isOptional(field) || this.chance(0.4)) {
				fields.push(`${JSON.stringify(key)}:${this.validFor(key, schemaOf(field))}`);
			}
		}
		if (mode === 'extra') {
			const key = this.pick([
				'__proto__',
				'constructor',
				'prototype',
				'toString',
				'hasOwnProperty',
				'extra',
				'__defineGetter__',
				'valueOf',
			]);
			const value = this.pick([
				'{"polluted":true}',
				'{"prototype":{"polluted":true}}',
				'1',
				'null',
				deep(10_000, '{"a":', '}'),
			]);
			fields.splice(Math.floor(this.random() * (fields.length + 1)), 0, `${JSON.stringify(key)}:${value}`);
		}
		return `{${fields.join(',')}}`;
	}

	probe(): Probe {
		const definitions = Object.values(deskRequests);
		const definition = this.pick(definitions);
		const id = this.id();
		const roll = this.random();
		const envelope = (method: string, params: string | undefined) =>
			`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":${JSON.stringify(method)}${params === undefined ? '' : `,"params":${params}`}}`;
		if (roll < 0.06) {
			const method = this.pick([
				'desk/no/such',
				`${definition.method}/`,
				definition.method.toUpperCase(),
				'__proto__',
				'constructor',
				'toString',
				'hasOwnProperty',
				'$/unknown',
				'',
				`desk/${'m'.repeat(this.pick([1000, 100_000]))}`,
			]);
			return {
				id,
				label: `unknown method ${method.slice(0, 40)}`,
				method,
				body: envelope(method, '{}'),
				expect: [ErrorCodes.MethodNotFound],
			};
		}
		if (roll < 0.1) {
			const params = this.pick(['[]', '["a"]', '["a","b"]', '[{},{},{}]', 'null', '5', '"x"', 'true']);
			return {
				id,
				label: `${definition.method} with params ${params}`,
				method: definition.method,
				body: envelope(definition.method, params),
				expect: [ErrorCodes.InvalidParams],
			};
		}
		if (roll < 0.13) {
			const params = this.breakObject(definition.params.shape!);
			const text = envelope(definition.method, params);
			// The same message with a byte that is never UTF-8 inside its first string.
			const cut = text.indexOf('"method":"') + 10;
			const bytes = Buffer.concat([
				Buffer.from(text.slice(0, cut), 'utf8'),
				Buffer.from([this.pick([0xff, 0xc3, 0xed, 0x80])]),
				Buffer.from(text.slice(cut), 'utf8'),
			]);
			return {
				id,
				label: `${definition.method} with invalid UTF-8`,
				method: definition.method,
				bytes,
				expect: [ErrorCodes.ParseError],
			};
		}
		if (roll < 0.15) {
			const params = this.pick([
				deep(10_000, '{"project":', '}', '"x"'),
				deep(10_000, '[', ']'),
				`{"project":${deep(10_000, '[', ']')}}`,
			]);
			return {
				id,
				label: `${definition.method} with 10 000-deep params`,
				method: definition.method,
				body: envelope(definition.method, params),
				expect: [ErrorCodes.InvalidParams],
			};
		}
		const shape = definition.params.shape!;
		return {
			id,
			label: `${definition.method} with one violation`,
			method: definition.method,
			body: envelope(definition.method, this.breakObject(shape)),
			expect: [ErrorCodes.InvalidParams],
		};
	}
}

describe('a fuzz of the JSON-RPC surface', () => {
	let server: RunningServer;
	let root: string;
	let repo: string;
	const project = 'webshop';

	before(async () => {
		root = tempDir();
		server = await startServer(path.join(root, 'library'), {
			nodeArgs: ['--require', path.join(__dirname, '..', 'helpers', 'prototypeProbe.js')],
		});
		repo = makeRepo(path.join(root, project), { commits: 2 });
		await server.call(OpenWorkspace, { folders: [{ name: project, path: repo }] });
	});

	const storeState = async () => ({
		assets: await server.call(ListAssets, {}),
		runs: await server.call(ListRuns, { project }),
		card: (await server.call(GetCard, { project })).card,
		attachments: await server.call(ListAttachments, { project }),
		repository: fs.readdirSync(repo).sort(),
		library: fs.readdirSync(path.join(root, 'library')).sort(),
	});

	it(
		`refuses every message with a typed error, changes nothing and keeps answering (seed ${seed})`,
		{ timeout: 120_000 },
		async () => {
			process.stdout.write(`# fuzz seed ${seed} (replay with DESK_FUZZ_SEED=${seed})\n`);
			const fuzzer = new Fuzzer(seed, project);
			const before = await storeState();
			const started = Date.now();
			let sent = 0;
			const kinds = new Map<string, number>();
			const declared = new Set<string>(Object.values(deskRequests).map((d) => d.method));
			while (sent < maxMessages && Date.now() - started < budgetMs) {
				const probes = Array.from({ length: batchSize }, () => fuzzer.probe());
				const answers = await Promise.all(
					probes.map((probe) =>
						server.sendRawBody(probe.id, probe.bytes ?? probe.body!).then((answer) => ({ probe, answer })),
					),
				);
				for (const { probe, answer } of answers) {
					if (declared.has(probe.method)) {
						kinds.set(probe.method, (kinds.get(probe.method) ?? 0) + 1);
					}
					checkAnswer(probe, answer);
				}
				sent += probes.length;
				// Still serving between batches.
				const status = await server.call(GetStatus, {});
				assert.equal(status.state, 'ready');
			}
			process.stdout.write(`# fuzz: ${sent} messages over ${kinds.size} methods in ${Date.now() - started} ms\n`);
			assert.equal(kinds.size, declared.size, `every declared method was fuzzed (${kinds.size} of ${declared.size})`);
			assert.deepEqual(await storeState(), before, 'the store is unchanged');
			assert.equal(server.child.exitCode, null);
			const rss = await server.call(GetStatus, {});
			assert.equal(rss.pid, server.child.pid, 'the same process answers');

			await server.stop();
			const line = /PROTOTYPE PROBE (.*)/.exec(server.stderr())?.[1];
			assert.ok(line, `the probe reported from inside the server:\n${server.stderr().slice(-2000)}`);
			assert.deepEqual(
				JSON.parse(line),
				{ changed: [], removed: [] },
				'no built-in prototype of the server process changed',
			);
		},
	);
});

describe('a fuzz of the framing', () => {
	it(
		`ends the server with exit code ${protocolErrorExitCode} on a seeded broken header, after telling the client (seed ${seed})`,
		{ timeout: 30_000 },
		async () => {
			const random = generator(seed ^ 0x5f3759df);
			const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
			const junk = (n: number) =>
				Array.from({ length: n }, () => String.fromCharCode(33 + Math.floor(random() * 94)))
					.join('')
					.replace(/[0-9:]/g, 'x');
			const breaks: Array<() => string | Buffer> = [
				() => `Content-Length: ${junk(1 + Math.floor(random() * 10))}\r\n\r\n{}`,
				() => `Content-Length: -${1 + Math.floor(random() * 1e6)}\r\n\r\n{}`,
				() => `Content-Length: ${64 * 1024 * 1024 + 1 + Math.floor(random() * 1e12)}\r\n\r\n{}`,
				() => `Content-Length: 2\r\nContent-Length: ${Math.floor(random() * 100)}\r\n\r\n{}`,
				() => `${pick(['Content-Type', 'X-Other', 'content-length'])} ${junk(8)}\r\n\r\n{}`,
				() =>
					Buffer.concat([
						Buffer.from('Content-Length: 2\r\nX-Name: ', 'ascii'),
						Buffer.from([0x80 + Math.floor(random() * 0x7f)]),
						Buffer.from('\r\n\r\n{}', 'ascii'),
					]),
				() =>
					`Content-Type: application/vscode-jsonrpc; charset=${pick(['latin1', 'utf-16', 'ascii'])}\r\nContent-Length: 2\r\n\r\n{}`,
				() => `X-Padding: ${junk(9000)}`,
			];
			const chosen = pick(breaks)();
			const server = await startServer(path.join(tempDir(), 'library'));
			server.writeRaw(chosen);
			const exit = await server.exited;
			const shown = typeof chosen === 'string' ? chosen.slice(0, 120) : chosen.toString('latin1').slice(0, 120);
			assert.deepEqual(exit, { code: protocolErrorExitCode, signal: null }, `after ${JSON.stringify(shown)}`);
			assert.ok(
				server.notifications.some((n) => n.method === ProtocolError.method),
				`the client was told, after ${JSON.stringify(shown)}`,
			);
			assert.match(server.stderr(), /protocol error: /);
		},
	);
});

function checkAnswer(probe: Probe, answer: RawAnswer): void {
	const where = `${probe.label} (seed ${seed}): ${JSON.stringify(answer).slice(0, 400)}`;
	assert.ok(answer.error, `refused, not served: ${where}`);
	assert.notEqual(answer.error.code, ErrorCodes.InternalError, `an internal error: ${where}`);
	assert.ok(probe.expect.includes(answer.error.code), `expected ${probe.expect.join(' or ')}: ${where}`);
	assert.ok(
		answer.error.message.length <= 700,
		`the message echoes ${answer.error.message.length} characters: ${where}`,
	);
	if (answer.error.code === ErrorCodes.InvalidParams) {
		const data = answer.error.data as DeskErrorJson | undefined;
		assert.ok(data && /^desk\.(badParams|relativePath|badText)$/.test(data.code), `a typed refusal: ${where}`);
		assert.equal(typeof data.data['field'], 'string', `names the field: ${where}`);
	}
}
