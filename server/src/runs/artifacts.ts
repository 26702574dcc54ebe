import { artifactFor } from '../ai/model';
import type { ArtifactRef } from '../ai/types';
import { scrubText } from '../core/secrets';
import type { AiStore } from '../store/aiStore';
import type { BlobStore } from '../store/blobStore';
import type { RunnerPorts } from './ports';
import type { AgentSettings } from './settings';

/** The store name artifacts carry: the library's content-addressed blob store. */
export const artifactStore = 'desk-blobs';

/** Stores `bytes` in the library's blob store and names them as an artifact. */
export function storeArtifact(blobs: BlobStore, bytes: Buffer, contentType: string): ArtifactRef {
	const hash = blobs.put(bytes);
	return artifactFor(bytes, artifactStore, hash, contentType);
}

/** Where the recorder puts the objects and artifacts of an agent's work, with its secrets scrubbed from text. */
export function objectSink(ports: RunnerPorts, agent: AgentSettings) {
	const secrets = secretsOf(agent);
	return {
		put: (objects: Parameters<AiStore['put']>[0]) => {
			ports.ai.put(objects);
			const run = objects.find((o) => 'run_id' in o) as { run_id: string } | undefined;
			if (run) {
				ports.changed(run.run_id);
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
