import * as path from 'node:path';
import { AttachmentStore, type AttachmentLimits } from '../../../server/src/attachments/attachmentStore';
import { silentLogger } from '../../../server/src/core/logger';
import { DurableDatabase } from '../../../server/src/store/durableDatabase';
import { SqlAttachmentRows } from '../../../server/src/store/sqlAttachmentRows';
import { projectMigrations, projectSchema } from '../../../server/src/store/schemas';

/** A project database and its attachment store in `folder` (as `<project>/.desk/` would hold them). */
export async function openAttachments(
	folder: string,
	limits: Partial<AttachmentLimits> = {},
): Promise<{ store: AttachmentStore; db: DurableDatabase }> {
	const db = await DurableDatabase.open({
		file: path.join(folder, 'project.db'),
		schema: projectSchema,
		migrations: projectMigrations,
		logger: silentLogger,
		lockTimeoutMs: 5_000,
	});
	return {
		store: new AttachmentStore(new SqlAttachmentRows(db), path.join(folder, 'attachments'), silentLogger, { limits }),
		db,
	};
}
