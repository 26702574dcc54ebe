import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DeskError } from '../core/errors';
import { readStoredObject } from '../core/storedJson';
import { encodeLaunchRecord, readLaunchRecord } from '../launch/storedFormats';
import type { LaunchRecord } from '../launch/types';
import { parseRunSettings, type RunSettings } from './settings';

/*
 * A run's carrier (glossary: Carrier): a process of its own that carries one run from its start to
 * the gate or its failure, writing the project's store as the desk always did. The window's desk
 * server starts one for each run and follows the run from the store; the carrier is in a session of
 * its own with its output in a file, so a window reload, which ends the extension host and its
 * server, does not end it (nor, through bubblewrap's --die-with-parent, the agent). Both halves of
 * the hand-over are here: the request the desk writes on the carrier's stdin, the line the carrier
 * answers on descriptor 3 once it holds the run's claim.
 */

/** What a desk hands its carrier: the run, the launch record it runs (as Go, Retry or a continuation made it) and its settings. */
export interface CarrierRequest {
	/** The top of the project's repository. */
	readonly top: string;
	readonly run: string;
	readonly record: LaunchRecord;
	readonly settings: RunSettings;
}

/** The version of the request's JSON; the carrier refuses another. */
export const carrierRequestFormat = 1;

/** The request as the carrier reads it on stdin (settings hold the names of secret variables, never their values). */
export function carrierRequestText(request: CarrierRequest): string {
	return JSON.stringify({
		format: carrierRequestFormat,
		top: request.top,
		run: request.run,
		record: encodeLaunchRecord(request.record),
		settings: request.settings,
	});
}

/** The one reader of a carrier's request: `run.badSettings` naming what is wrong, never a guess. */
export function readCarrierRequest(text: string): CarrierRequest {
	const bad = (problem: string) =>
		new DeskError('run.badSettings', `The run handed to this carrier is not one a desk wrote: ${problem}.`, {});
	const request = readStoredObject(text, carrierRequestFormat, {
		corrupt: (problem) => bad(`it is ${problem}`),
		unknownFormat: (found) => bad(`its format is ${JSON.stringify(found)}, this desk reads ${carrierRequestFormat}`),
	});
	for (const field of ['top', 'run', 'record'] as const) {
		if (typeof request[field] !== 'string' || request[field] === '') {
			throw bad(`${field} is not text`);
		}
	}
	return {
		top: request.top as string,
		run: request.run as string,
		record: readLaunchRecord(request.record as string),
		settings: parseRunSettings(request.settings),
	};
}

/** A carrier that took its run: its process, and when it ends (the run at the gate or failed, what it started ended). */
export interface StartedCarrier {
	readonly pid: number;
	readonly exited: Promise<void>;
}

/** The most a request may be (a ticket and settings at their caps, with room). */
export const maxCarrierRequestBytes = 4 * 1024 * 1024;

/**
 * Starts the carrier of `request.run`: `node <deskScript> --store <libraryDir> run carry`, in a session
 * of its own (detached), its stdout and stderr appended to `logFile`, the request on its stdin.
 * Resolves once it says it holds the run's claim; rejects with `run.carrierFailed` (its log named)
 * when it cannot be started or ends before that, and then never carries the run.
 */
export function startCarrier(options: {
	deskScript: string;
	libraryDir: string;
	request: CarrierRequest;
	logFile: string;
}): Promise<StartedCarrier> {
	const { deskScript, libraryDir, request, logFile } = options;
	const failed = (why: string) =>
		new DeskError('run.carrierFailed', `The carrier of run ${request.run} ${why}; its log is ${logFile}.`, {
			run: request.run,
			log: logFile,
		});
	let log: number;
	try {
		fs.mkdirSync(path.dirname(logFile), { recursive: true });
		log = fs.openSync(logFile, 'a', 0o600);
	} catch (error) {
		return Promise.reject(failed(`has no log file (${(error as Error).message})`));
	}
	let child;
	try {
		// stdin carries the request; descriptor 3 its answer. The log is the carrier's own file, so no
		// pipe to this process breaks when this process ends.
		child = spawn(process.execPath, [deskScript, '--store', libraryDir, '--verbose', 'run', 'carry'], {
			detached: true,
			stdio: ['pipe', log, log, 'pipe'],
			cwd: libraryDir,
			env: { ...process.env, [answerFdVariable]: String(answerFd) },
		});
	} catch (error) {
		return Promise.reject(failed(`could not be started (${(error as Error).message})`));
	} finally {
		fs.closeSync(log);
	}
	const started = child;
	const exited = new Promise<void>((resolve) => started.once('exit', () => resolve()));
	return new Promise<StartedCarrier>((resolve, reject) => {
		let answer = '';
		let settled = false;
		const settle = (error?: DeskError) => {
			if (settled) {
				return;
			}
			settled = true;
			started.stdio[3]?.removeAllListeners('data');
			started.stdio[3]?.destroy();
			started.unref();
			if (error) {
				reject(error);
			} else {
				resolve({ pid: started.pid!, exited });
			}
		};
		started.once('error', (error) => settle(failed(`could not be started (${error.message})`)));
		started.once('exit', (code, signal) =>
			settle(failed(`ended (${signal ?? `exit code ${code}`}) before it took the run`)),
		);
		started.stdio[3]!.on('data', (chunk: Buffer) => {
			answer += chunk.toString('utf8');
			const end = answer.indexOf('\n');
			if (end >= 0) {
				const line = answer.slice(0, end);
				settle(line === carryingLine ? undefined : failed(`refused the run: ${line.slice(0, 500)}`));
			}
		});
		// A carrier that ends early closes its stdin: the write then fails, and its exit says why.
		started.stdin!.on('error', () => undefined);
		started.stdin!.end(carrierRequestText(request));
	});
}

/**
 * The `runCarrier` of a desk (see `Desk.runCarrier`): carriers run the `desk` bundle `deskScript` on
 * the library `libraryDir`. Undefined when the bundle is not there (a desk run from its sources): that
 * desk carries its runs itself.
 */
export function carrierStarter(
	deskScript: string,
	libraryDir: string,
): ((request: CarrierRequest, logFile: string) => Promise<StartedCarrier>) | undefined {
	if (!fs.existsSync(deskScript)) {
		return undefined;
	}
	return (request, logFile) => startCarrier({ deskScript, libraryDir, request, logFile });
}

const carryingLine = 'carrying';

/** The descriptor the carrier answers on, and the variable by which its desk says it gave one. */
const answerFd = 3;
const answerFdVariable = 'DESK_CARRIER_ANSWER_FD';

/**
 * The carrier's answer on descriptor 3 (its desk's handshake): it holds the run's claim, or why it
 * does not. Written only when its desk said it gave that descriptor and it is a pipe: a carrier
 * started otherwise may have a file of its own there (a database), which must never be written.
 */
export function answerDesk(answer: { carrying: true } | { refused: string }): void {
	if (process.env[answerFdVariable] !== String(answerFd)) {
		return;
	}
	try {
		const stat = fs.fstatSync(answerFd);
		if (!stat.isFIFO() && !stat.isSocket()) {
			return;
		}
		fs.writeSync(answerFd, `${'carrying' in answer ? carryingLine : answer.refused.replace(/\n/g, ' ')}\n`);
		fs.closeSync(answerFd);
	} catch {
		// The desk that started it is gone: nobody waits for the answer.
	} finally {
		// Answered once: a branch's carrier it starts is told its own descriptor.
		delete process.env[answerFdVariable];
	}
}
