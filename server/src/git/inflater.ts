import * as zlib from 'node:zlib';

/**
 * Node's zlib handle, as `zlib.inflateSync` drives it. `inflateSync` makes, initialises and frees a
 * zlib state for every stream; a walk of a long history inflates tens of thousands of small commits,
 * where that costs ten times the inflating itself (190 ms against 16 ms for 24,000 commits here). This
 * interface is Node's own and not documented, so it is checked on a known stream before it is used,
 * and any surprise (a Node whose handle differs, an error) leaves the work to `inflateSync`.
 */
interface ZlibHandle {
	init(
		windowBits: number,
		level: number,
		memLevel: number,
		strategy: number,
		writeState: Uint32Array,
		processCallback: () => void,
		dictionary: undefined,
	): void;
	writeSync(
		flush: number,
		input: Buffer,
		inputOffset: number,
		inputLength: number,
		output: Buffer,
		outputOffset: number,
		outputLength: number,
	): void;
	reset(): void;
	close(): void;
	onerror: (message: string, errno: number) => void;
}

/** The first part of an object `inflatePrefix` makes before it asks whether that is enough (a commit's header and subject usually fit). */
const prefixStep = 1024;

/**
 * Inflates many zlib streams of known size with one reused zlib state. `inflate` answers only a
 * stream that inflated whole, its checksum right, to exactly the size asked; for anything else
 * (damage, a stream cut short by the bytes given, another size) it answers undefined, and the caller
 * asks `inflateSync`, which says precisely what is wrong.
 */
export class Inflater {
	private handle: ZlibHandle | undefined;
	private readonly state = new Uint32Array(2);
	private failed = false;
	private scratch = Buffer.allocUnsafe(64 * 1024);

	constructor(useHandle = true) {
		if (useHandle) {
			this.handle = openHandle(this.state, (failed) => (this.failed = failed));
			if (this.handle && !this.selfCheck()) {
				this.handle.close();
				this.handle = undefined;
			}
		}
	}

	/** True when streams go through the reused state rather than a new one each. */
	get reusesState(): boolean {
		return this.handle !== undefined;
	}

	/** The stream's bytes when `input` holds the whole stream (trailing bytes allowed) and it inflates to exactly `size` bytes. */
	inflate(input: Buffer, size: number): Buffer | undefined {
		const handle = this.handle;
		if (!handle) {
			return undefined;
		}
		// One spare byte: a stream longer than declared fills it, and is refused.
		const output = Buffer.allocUnsafe(size + 1);
		return this.run(handle, input, 0, input.length, output, size) ? output.subarray(0, size) : undefined;
	}

	/** Inflates `input` into the first `size` + 1 bytes of `output`; true when it made exactly `size` bytes and the stream ended. */
	private run(
		handle: ZlibHandle,
		input: Buffer,
		inputAt: number,
		inputLength: number,
		output: Buffer,
		size: number,
	): boolean {
		this.failed = false;
		this.state[0] = 0xffffffff;
		try {
			handle.reset();
			handle.writeSync(zlib.constants.Z_FINISH, input, inputAt, inputLength, output, 0, size + 1);
		} catch {
			this.failed = true;
		}
		return !this.failed && size + 1 - this.state[0]! === size;
	}

	/**
	 * As `inflate`, into a buffer this inflater reuses: the bytes are valid only until the next call.
	 * For a walk that reads thousands of objects and keeps a few fields of each: fresh memory for each
	 * one (its pages first touched) cost more than the inflating.
	 */
	inflateTransient(input: Buffer, size: number, inputAt = 0, inputLength = input.length - inputAt): Buffer | undefined {
		const handle = this.handle;
		if (!handle) {
			return undefined;
		}
		if (this.scratch.length < size + 1) {
			this.scratch = Buffer.allocUnsafe(Math.max(size + 1, this.scratch.length * 2));
		}
		if (!this.run(handle, input, inputAt, inputLength, this.scratch, size)) {
			return undefined;
		}
		return this.scratch.subarray(0, size);
	}

	/**
	 * As `inflateTransient`, but stops once `enough` says the bytes made so far (the first `length` of
	 * the buffer it is given) hold what is wanted (a commit's header and subject, not its whole
	 * message): a view of those bytes, or of the whole object when the stream ends first. A stream not
	 * inflated to its end is not checked against its checksum; what was made is still zlib's own
	 * decoding of it.
	 */
	inflatePrefix(
		input: Buffer,
		size: number,
		enough: (made: Buffer, length: number) => boolean,
		inputAt = 0,
		inputLength = input.length - inputAt,
	): Buffer | undefined {
		const handle = this.handle;
		if (!handle) {
			return undefined;
		}
		if (this.scratch.length < size + 1) {
			this.scratch = Buffer.allocUnsafe(Math.max(size + 1, this.scratch.length * 2));
		}
		this.failed = false;
		let made = 0;
		let used = 0;
		let step = prefixStep;
		try {
			handle.reset();
			for (;;) {
				const room = Math.min(step, size + 1 - made);
				this.state[0] = 0xffffffff;
				this.state[1] = 0xffffffff;
				handle.writeSync(zlib.constants.Z_FINISH, input, inputAt + used, inputLength - used, this.scratch, made, room);
				if (this.failed || this.state[0]! > room || this.state[1]! > inputLength - used) {
					return undefined;
				}
				made += room - this.state[0]!;
				used += inputLength - used - this.state[1]!;
				if (this.state[0] !== 0) {
					// Room was left: the stream ended (running out of input is an error, reported above).
					return made === size ? this.scratch.subarray(0, size) : undefined;
				}
				if (made > size) {
					return undefined;
				}
				if (made < size && enough(this.scratch, made)) {
					return this.scratch.subarray(0, made);
				}
				step *= 2;
			}
		} catch {
			return undefined;
		}
	}

	close(): void {
		this.handle?.close();
		this.handle = undefined;
	}

	private selfCheck(): boolean {
		const text = Buffer.from('agent desk inflater check '.repeat(8));
		const stream = zlib.deflateSync(text);
		const whole = this.inflate(Buffer.concat([stream, Buffer.from('trailing')]), text.length);
		const cut = this.inflate(stream.subarray(0, stream.length - 3), text.length);
		const shorter = this.inflate(stream, text.length - 1);
		return whole !== undefined && whole.equals(text) && cut === undefined && shorter === undefined;
	}
}

function openHandle(state: Uint32Array, onFailure: (failed: boolean) => void): ZlibHandle | undefined {
	try {
		const binding = (
			process as unknown as { binding(name: string): { Zlib?: new (mode: number) => ZlibHandle } }
		).binding('zlib');
		if (typeof binding.Zlib !== 'function') {
			return undefined;
		}
		const handle = new binding.Zlib(zlib.constants.INFLATE);
		handle.onerror = () => onFailure(true);
		handle.init(15, 0, 8, 0, state, () => undefined, undefined);
		return handle;
	} catch {
		return undefined;
	}
}
