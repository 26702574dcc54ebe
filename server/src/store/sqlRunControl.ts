import { fromJson } from '../ai/model';
import type { Run } from '../ai/types';
import { readLaunchRecord } from '../launch/storedFormats';
import type { LaunchRecord } from '../launch/types';
import type { RunControlRow, RunControlStore } from '../runs/ports';
import type { DurableDatabase, WriteTransaction } from './durableDatabase';

/** Reads through the database outside a write, or through the transaction inside one. */
type Query = Pick<WriteTransaction, 'all' | 'get'>;

/** The SQL adapter of `RunControlStore` (runs/ports.ts): the run_control table of a project database, and the launch records and Runs it reads beside it. */
export class SqlRunControl implements RunControlStore {
	constructor(private readonly db: DurableDatabase) {}

	rows(query: Query = this.db): RunControlRow[] {
		return query.all<RunControlRow>('SELECT * FROM run_control');
	}

	row(runId: string): RunControlRow | undefined {
		return this.db.get<RunControlRow>('SELECT * FROM run_control WHERE run_id = ?', [runId]);
	}

	/** The Run as stored, read in the same transaction as the control rows. */
	storedRun(runId: string, query: Query = this.db): Run | undefined {
		const json = query.get<{ json: string }>('SELECT json FROM ai_objects WHERE object_id = ?', [runId])?.json;
		return json === undefined ? undefined : (fromJson(JSON.parse(json)) as Run);
	}

	/** Writes the claim: this process (pid and token) runs it; a row already there keeps its other fields. */
	claim(
		tx: WriteTransaction,
		runId: string,
		launchId: string,
		runner: { pid: number; token: string },
		json: string,
	): void {
		tx.run(
			'INSERT INTO run_control (run_id, launch_id, runner_pid, runner_token, agent_pgid, cancel_reason, json, updated_at) VALUES (?, ?, ?, ?, NULL, NULL, ?, ?) ON CONFLICT (run_id) DO UPDATE SET runner_pid = excluded.runner_pid, runner_token = excluded.runner_token',
			[runId, launchId, runner.pid, runner.token, json, new Date().toISOString()],
		);
	}

	savePlacement(runId: string, json: string): void {
		this.db.write((tx) =>
			tx.run('UPDATE run_control SET json = ?, updated_at = ? WHERE run_id = ?', [
				json,
				new Date().toISOString(),
				runId,
			]),
		);
	}

	setAgentGroup(runId: string, pgid: number): void {
		this.db.write((tx) =>
			tx.run('UPDATE run_control SET agent_pgid = ?, updated_at = ? WHERE run_id = ?', [
				pgid,
				new Date().toISOString(),
				runId,
			]),
		);
	}

	/** The agent is gone: its process group must not be signalled again (the number may be reused). */
	agentGone(runId: string): void {
		this.db.write((tx) => tx.run('UPDATE run_control SET agent_pgid = NULL WHERE run_id = ?', [runId]));
	}

	partOver(runId: string, runner: { pid: number; token: string; endedToken: string }): void {
		this.db.write((tx) =>
			tx.run(
				'UPDATE run_control SET runner_token = ?, updated_at = ? WHERE run_id = ? AND runner_pid = ? AND runner_token = ?',
				[runner.endedToken, new Date().toISOString(), runId, runner.pid, runner.token],
			),
		);
	}

	/** The run is over in this process. */
	executionEnded(runId: string): void {
		this.db.write((tx) =>
			tx.run('UPDATE run_control SET agent_pgid = NULL, updated_at = ? WHERE run_id = ?', [
				new Date().toISOString(),
				runId,
			]),
		);
	}

	requestCancel(runId: string, reason: string): void {
		this.db.write((tx) =>
			tx.run('UPDATE run_control SET cancel_reason = ?, updated_at = ? WHERE run_id = ?', [
				reason,
				new Date().toISOString(),
				runId,
			]),
		);
	}

	/** Sets `claim` as the run's decision maker in one write, after `check` saw the holder there was (and did not throw). */
	claimDecision(runId: string, claim: string, check: (holder: string | null) => void): void {
		this.db.write((tx) => {
			check(
				tx.get<{ deciding: string | null }>('SELECT deciding FROM run_control WHERE run_id = ?', [runId])?.deciding ??
					null,
			);
			tx.run('UPDATE run_control SET deciding = ? WHERE run_id = ?', [claim, runId]);
		});
	}

	releaseDecision(runId: string, claim: string): void {
		this.db.write((tx) =>
			tx.run('UPDATE run_control SET deciding = NULL WHERE run_id = ? AND deciding = ?', [runId, claim]),
		);
	}

	/** The launch record Go froze for `launchId`. */
	launchRecord(launchId: string): LaunchRecord | undefined {
		const row = this.db.get<{ json: string }>('SELECT json FROM launch_records WHERE launch_id = ?', [launchId]);
		return row ? readLaunchRecord(row.json) : undefined;
	}

	launchRecordOfTask(task: string): LaunchRecord | undefined {
		let refused: unknown;
		for (const row of this.db.all<{ json: string }>('SELECT json FROM launch_records ORDER BY created_at')) {
			try {
				const record = readLaunchRecord(row.json);
				if (record.task === task) {
					return record;
				}
			} catch (error) {
				refused ??= error;
			}
		}
		if (refused !== undefined) {
			throw refused;
		}
		return undefined;
	}

	/** Runs `body` as one durable transaction of the project database. */
	transaction<T>(body: (tx: WriteTransaction) => T): T {
		return this.db.write(body);
	}
}
