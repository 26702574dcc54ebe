import type { AttachmentStore } from '../attachments/attachmentStore';
import type { Library } from '../assets/library';
import type { ProjectRecord } from '../assets/types';
import type { Logger } from '../core/logger';
import type { AiStore } from '../store/aiStore';
import type { BlobStore } from '../store/blobStore';
import type { RunControl } from './runControl';

/** What carrying out and deciding runs needs from the rest of the desk (built by the composition root). */
export interface RunnerPorts {
	library: Library;
	attachments: AttachmentStore;
	blobs: BlobStore;
	ai: AiStore;
	/** The project's run_control rows. */
	control: RunControl;
	project: ProjectRecord;
	libraryDir: string;
	logger: Logger;
	/** Told whenever the run's objects changed (the Runs view refreshes). */
	changed: (runId: string) => void;
	/** Told when a run reached the gate (completed with a change) or failed. */
	finished: (runId: string, status: 'gate' | 'failed') => void;
	/** Told when a task got attachments. */
	attachmentsChanged?: (taskId: string) => void;
}
