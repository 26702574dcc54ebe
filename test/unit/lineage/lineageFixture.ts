import * as path from 'node:path';
import { actor, addRun, newIntent, newRun, newTask } from '../../../server/src/ai/model';
import { silentLogger } from '../../../server/src/core/logger';
import { uuidv7 } from '../../../server/src/ai/ids';
import { encodeLaunchRecord } from '../../../server/src/launch/storedFormats';
import type { LaunchRecord } from '../../../server/src/launch/types';
import { LineageService, type ForkRequest, type ForkSettings } from '../../../server/src/lineage/lineage';
import { defaultLineageLimits, type LineageLimits } from '../../../server/src/lineage/types';
import { AiStore } from '../../../server/src/store/aiStore';
import { DurableDatabase } from '../../../server/src/store/durableDatabase';
import { projectMigrations, projectSchema } from '../../../server/src/store/schemas';
import { SqlLineage } from '../../../server/src/store/sqlLineage';

/** A project database in `folder` (as `<project>/.desk/` holds it) and its lineage, `main` listed. */
export async function openLineage(
	folder: string,
): Promise<{ db: DurableDatabase; ai: AiStore; lineage: LineageService }> {
	const db = await DurableDatabase.open({
		file: path.join(folder, 'project.db'),
		schema: projectSchema,
		migrations: projectMigrations,
		logger: silentLogger,
		lockTimeoutMs: 10_000,
	});
	const ai = new AiStore(db);
	const lineage = new LineageService(new SqlLineage(db, ai));
	lineage.listMain('test', '2026-01-01T00:00:00.000Z');
	return { db, ai, lineage };
}

export function forkSettings(limits: Partial<LineageLimits> = {}, branch: ForkSettings['branch'] = {}): ForkSettings {
	return {
		branch,
		limits: { ...defaultLineageLimits, ...limits },
		agents: ['claude', 'scripted'],
		defaultAgent: 'claude',
		agentsWithoutTools: [],
		stored: { agent: 'claude' },
	};
}

const person = actor('human', 'Jane Doe <jane@example.com>');

/** A fork by the person on `root` (default main), keyed by `key`. */
export function personFork(key: string, extra: Partial<ForkRequest> = {}): ForkRequest {
	return {
		project: 'shop',
		prompt: `Split the parser (${key})`,
		root: 'main',
		starter: 'person',
		by: person,
		head: 'a'.repeat(40),
		settings: forkSettings(),
		receipt: { scope: 'person', key, hash: `hash-${key}`, tool: 'prompt' },
		now: new Date(),
		...extra,
	};
}

/** A run the person drove (a Go): its Intent, Task, Run and launch record, the run tagged with its agent. */
export function goRun(
	ai: AiStore,
	db: DurableDatabase,
	agent = 'scripted',
): { run: string; task: string; launch: LaunchRecord } {
	const intent = newIntent(person, 'Refactor the parser');
	const task = newTask(person, 'Refactor the parser', { intent });
	const run = newRun(actor('system', 'agent-desk'), task, 'b'.repeat(40));
	run.tags = { ...run.tags, 'desk.agent': agent };
	addRun(task, run);
	ai.put([intent, task, run]);
	const launch: LaunchRecord = {
		launch_id: uuidv7(),
		created_at: new Date().toISOString(),
		project: 'shop',
		ticket: 'Refactor the parser',
		template: { name: 'plan-work', nodes: ['plan', 'work'] },
		plugs: [{ id: 'asset-1', role: 'reference', nodes: [], files: [], copy: {}, name: 'specs', version: 3 }],
		intent: intent.object_id,
		task: task.object_id,
		run: run.object_id,
	};
	db.write((tx) =>
		tx.run('INSERT INTO launch_records (launch_id, created_at, json) VALUES (?, ?, ?)', [
			launch.launch_id,
			launch.created_at,
			encodeLaunchRecord(launch),
		]),
	);
	return { run: run.object_id, task: task.object_id, launch };
}
