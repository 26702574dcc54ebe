import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { actor, newEvidence } from '../ai/model';
import type { Evidence, EvidenceKind, PatchSet, Run } from '../ai/types';
import type { AssetCheck } from '../assets/types';
import type { LaunchRecord } from '../launch/types';
import type { BlobStore } from '../store/blobStore';
import { sandboxLayout } from './agentProcess';
import { cappedText, maxCheckLogBytes, objectSink, storeArtifact } from './artifacts';
import type { RunPlacement } from './placement';
import type { RunnerPorts } from './ports';
import { baseChildEnv } from './programs';
import { killGroup } from './runnerProcess';
import { programFolders, sandboxArgs, spawnSandboxed } from './sandbox';
import type { AgentSettings, RunSettings } from './settings';

/**
 * The checks of a run's attempt (glossary: Checks): the target asset's and the project's, run in the work folder
 * (in the sandbox, without the agent's login or the network, when the run is isolated), each an
 * Evidence on the PatchSet with its full log stored.
 */

const system = actor('system', 'agent-desk');

/** The target asset's checks (glossary: Checks) and the project's, each an Evidence with its full log stored. */
export async function runChecks(
	ports: RunnerPorts,
	run: Run,
	patch: PatchSet,
	placement: RunPlacement,
	record: LaunchRecord,
	settings: RunSettings,
	agent: AgentSettings,
	checkCancel: () => void,
	onStop: (stop: () => void) => void,
): Promise<Evidence[]> {
	const targetPlug = record.plugs.find((p) => p.role === 'target');
	const targetId = targetPlug?.id ?? ports.project.main_asset;
	const assetChecks = targetId ? (ports.library.getAsset(targetId).checks ?? []) : [];
	const evidence: Evidence[] = [];
	for (const check of [...assetChecks, ...settings.checks]) {
		checkCancel();
		const result = await runCheck(ports, check, placement, onStop);
		checkCancel();
		const item = newEvidence(system, run, evidenceKind(check.id), check.executable, {
			patchset: patch,
			command: [check.executable, ...check.args].join(' '),
			exitCode: result.exitCode,
			summary: result.summary,
		});
		item.tags = { ...item.tags, 'desk.check': check.id, 'desk.duration_ms': String(result.durationMs) };
		item.report_artifacts = [
			storeArtifact(
				ports.blobs,
				Buffer.from(objectSink(ports, agent).scrub(result.log), 'utf8'),
				'text/plain; charset=utf-8',
			),
		];
		evidence.push(item);
		ports.ai.put([item]);
		ports.changed(run.object_id);
	}
	return evidence;
}

async function runCheck(
	ports: RunnerPorts,
	check: AssetCheck,
	placement: RunPlacement,
	onStop: (stop: () => void) => void,
): Promise<{ exitCode: number; summary: string; log: string; durationMs: number }> {
	const cwd = path.join(placement.work_folder, check.cwd || '.');
	const env: Record<string, string> = {
		...baseChildEnv(),
		CI: '1',
	};
	const command = [check.executable, ...check.args];
	const started = Date.now();
	let child;
	if (placement.isolated) {
		// Checks run what the agent wrote: the same sandbox, without the agent's login or the network.
		const layout = sandboxLayout(ports, placement, undefined, undefined);
		const args = sandboxArgs(
			{ ...layout, readOnly: [...layout.readOnly, ...programFolders(check.executable)] },
			env,
			command,
		).map((a, i, all) => (all[i - 1] === '--chdir' ? cwd : a));
		child = spawnSandboxed(args, { cwd, env: { PATH: env.PATH! }, stdin: 'ignore' });
	} else {
		child = spawn(command[0]!, command.slice(1), { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
	}
	if (child.pid !== undefined) {
		const pgid = child.pid;
		onStop(() => killGroup(pgid, 'SIGKILL'));
	}
	const chunks: Buffer[] = [];
	let size = 0;
	let printed = 0;
	// A check that prints without end must not exhaust the desk's memory: a byte past the cap is
	// kept, so the log says it was cut.
	const keep = (chunk: Buffer) => {
		printed += chunk.length;
		if (size <= maxCheckLogBytes) {
			chunks.push(chunk);
			size += chunk.length;
		}
	};
	child.stdout?.on('data', keep);
	child.stderr?.on('data', keep);
	let timedOut = false;
	const timer = setTimeout(() => {
		timedOut = true;
		if (child.pid !== undefined) {
			killGroup(child.pid, 'SIGKILL');
		}
	}, check.timeout * 1000);
	const exit = await new Promise<{ code: number | null; error?: Error }>((resolve) => {
		child.on('error', (error) => resolve({ code: null, error }));
		child.on('close', (code) => resolve({ code }));
	});
	clearTimeout(timer);
	const log = cappedText(Buffer.concat(chunks).toString('utf8'), maxCheckLogBytes, 'log', printed).text;
	const durationMs = Date.now() - started;
	const seconds = (durationMs / 1000).toFixed(1);
	if (exit.error) {
		return {
			exitCode: 127,
			summary: `could not start ${check.executable}: ${exit.error.message}`,
			log: exit.error.message,
			durationMs,
		};
	}
	if (timedOut) {
		return { exitCode: 124, summary: `timed out after ${check.timeout} s`, log, durationMs };
	}
	const code = exit.code ?? 1;
	const last =
		log
			.trim()
			.split('\n')
			.filter((l) => l.trim() !== '')
			.pop() ?? '';
	return {
		exitCode: code,
		summary:
			code === 0
				? `passed in ${seconds} s`
				: `failed (exit ${code}) in ${seconds} s${last ? `: ${last.slice(0, 160)}` : ''}`,
		log,
		durationMs,
	};
}

/** A check's full log (stored as its report), for the next attempt's prompt. */
export function evidenceLog(blobs: BlobStore, evidence: Evidence): string {
	const ref = evidence.report_artifacts[0];
	return ref?.hash && blobs.has(ref.hash) ? blobs.get(ref.hash).toString('utf8') : (evidence.summary ?? '');
}

function evidenceKind(id: string): EvidenceKind {
	const lower = id.toLowerCase();
	if (/test/.test(lower)) {
		return 'test';
	}
	if (/lint|eslint|format|style/.test(lower)) {
		return 'lint';
	}
	if (/build|compile|tsc|typecheck/.test(lower)) {
		return 'build';
	}
	return { other: id };
}
