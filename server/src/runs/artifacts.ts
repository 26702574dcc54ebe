import { artifactFor } from '../ai/model';
import type { ArtifactRef } from '../ai/types';
import { scrubText } from '../core/secrets';
import type { AiStore } from '../store/aiStore';
import type { BlobStore } from '../store/blobStore';
import type { RunnerPorts } from './ports';
import type { AgentSettings } from './settings';

/** The store name artifacts carry: the library's content-addressed blob store. */
export const artifactStore = 'desk-blobs';

/** The most of one tool call's output a run keeps (glossary: ToolInvocation): a longer one is cut, and says so. */
export const maxToolOutputBytes = 4 * 1024 * 1024;
/** The most of one message of the agent's a run keeps (glossary: Conversation). */
export const maxMessageBytes = 1024 * 1024;
/**
 * The most of each text in one tool call's input a run keeps in its record (glossary: ToolInvocation):
 * a file written whole through a Write tool would otherwise sit in the project database as many
 * times as the agent wrote it; the file itself is in the run's change.
 */
export const maxToolInputTextBytes = 64 * 1024;
/** The most of one check's log a run keeps (glossary: Evidence). */
export const maxCheckLogBytes = 16 * 1024 * 1024;

/**
 * `text` as the run keeps it: whole up to `maxBytes` of UTF-8, else its first `maxBytes` (cut
 * between characters) followed by a line that says what was cut, so nobody takes the rest for lost
 * in silence. `bytes` is the whole text's size: `printed` when only the beginning of what was
 * printed reached `text`.
 */
export function cappedText(
	text: string,
	maxBytes: number,
	what: string,
	printed?: number,
): { text: string; cut: boolean; bytes: number } {
	const whole = Buffer.from(text, 'utf8');
	const bytes = Math.max(printed ?? 0, whole.length);
	if (bytes <= maxBytes) {
		return { text, cut: false, bytes };
	}
	// A continuation byte (10xxxxxx) is no character's start: the cut moves back to one.
	let end = Math.min(maxBytes, whole.length);
	while (end > 0 && (whole[end]! & 0xc0) === 0x80) {
		end -= 1;
	}
	const kept = whole.subarray(0, end).toString('utf8');
	return {
		text: `${kept}\n${truncationMark(what, end, bytes)}\n`,
		cut: true,
		bytes,
	};
}

/** The line that ends a text the desk cut: what it was, how much is kept of how much. */
export function truncationMark(what: string, kept: number, whole: number): string {
	return `[desk: truncated — the ${what} was ${whole.toLocaleString('en-US')} bytes; the first ${kept.toLocaleString('en-US')} are kept]`;
}

/** Stores `bytes` in the library's blob store and names them as an artifact. */
export function storeArtifact(blobs: BlobStore, bytes: Buffer, contentType: string): ArtifactRef {
	const hash = blobs.put(bytes);
	return artifactFor(bytes, artifactStore, hash, contentType);
}

/** Where the recorder puts the objects and artifacts of an agent's work, with its secrets scrubbed from text. */
export function objectSink(ports: RunnerPorts, agent: AgentSettings) {
	const secrets = secretsOf(agent);
	return {
		/** Stores `objects`; the views are told of `runId`'s change, or of the run an object names. */
		put: (objects: Parameters<AiStore['put']>[0], runId?: string) => {
			ports.ai.put(objects);
			const run = runId ?? (objects.find((o) => 'run_id' in o) as { run_id: string } | undefined)?.run_id;
			if (run) {
				ports.changed(run);
			}
		},
		storeArtifact: (bytes: Buffer, contentType: string) => storeArtifact(ports.blobs, bytes, contentType),
		scrub: (text: string) => scrubText(text, secrets),
	};
}

/** The values of the secrets the desk passes to the agent, to be scrubbed from what is stored. */
export function secretsOf(agent: AgentSettings): string[] {
	return agent.secretEnv.map((name) => process.env[name]).filter((v): v is string => v !== undefined);
}

/** A tool call's input as the run keeps it: every text in it whole up to `maxBytes`, else cut with {@link cappedText}'s mark. */
export function cappedToolInput(value: unknown, maxBytes = maxToolInputTextBytes): unknown {
	if (typeof value === 'string') {
		return value.length <= maxBytes / 3 ? value : cappedText(value, maxBytes, 'input').text;
	}
	if (Array.isArray(value)) {
		return value.map((item) => cappedToolInput(item, maxBytes));
	}
	if (value !== null && typeof value === 'object') {
		return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, cappedToolInput(item, maxBytes)]));
	}
	return value;
}
