/**
 * Loaded into the real server process with `node --require` (see `startServer`'s `nodeArgs`): when
 * the process exits it writes to stderr, as one `PROTOTYPE PROBE {...}` line, every property that
 * appeared on or changed in the built-in prototypes since it started. A test that sends `__proto__`
 * and `constructor` keys reads that line: pollution inside the server, not in the test process.
 */
const watched: Array<[string, object]> = [
	['Object.prototype', Object.prototype],
	['Array.prototype', Array.prototype],
	['String.prototype', String.prototype],
	['Function.prototype', Function.prototype],
	['Number.prototype', Number.prototype],
	['Boolean.prototype', Boolean.prototype],
	['Promise.prototype', Promise.prototype],
];

function snapshot(): Map<string, unknown> {
	const values = new Map<string, unknown>();
	for (const [name, proto] of watched) {
		for (const key of Reflect.ownKeys(proto)) {
			const descriptor = Object.getOwnPropertyDescriptor(proto, key);
			values.set(`${name}.${String(key)}`, descriptor && 'value' in descriptor ? descriptor.value : descriptor?.get);
		}
		values.set(`${name} [[Prototype]]`, Object.getPrototypeOf(proto));
	}
	return values;
}

const before = snapshot();
process.on('exit', () => {
	const after = snapshot();
	const changed = [...after.keys()].filter((key) => !before.has(key) || before.get(key) !== after.get(key));
	const removed = [...before.keys()].filter((key) => !after.has(key));
	process.stderr.write(`PROTOTYPE PROBE ${JSON.stringify({ changed, removed })}\n`);
});
