/**
 * Resume from Checkpoint (glossary: Checkpoint): a person starts a new run of a checkpointed run's
 * task from the state it kept, in the editor or at the command line; an agent never does.
 */
import type { LaunchRecord } from '../launch/types';
import { ResumeRun } from '../protocol/protocol';
import { requireAgentProgram } from '../runs/agentCheck';
import { parseRunSettings } from '../runs/settings';
import { answerOnce, recordAnswer } from '../store/clientRequests';
import { projectTop } from './attachments';
import { operation } from './operation';

/** The line the resumed run's ticket ends with: its agent finds the kept change in its work folder. */
const resumedNote =
	'This run resumes from a checkpoint: the work folder already holds the change kept then. Continue from it.';

export const resumeRun = operation({
	name: 'run.resume',
	summary: "Resume from Checkpoint: a new run of a checkpointed run's task, its work folder holding the kept change.",
	params: ResumeRun.params,
	callers: ['editor', 'cli'],
	mutates: true,
	idempotent: false,
	surfaces: { rpc: ResumeRun, cli: 'run resume' },
	async run(call, { project, run, settings }) {
		const { desk, request } = call;
		const top = projectTop(desk, project);
		// Settings are checked before anything is made.
		const runSettings = parseRunSettings(settings);
		const { gate, executor } = await desk.runs(top);
		let launched: LaunchRecord | undefined;
		const { result, replayed } = await answerOnce(await desk.projectRequests(top), request, () =>
			gate.resume(run, {
				isolation: runSettings.isolation,
				check: (record) => {
					requireAgentProgram(runSettings);
					executor.assertCheckoutFree(runSettings, record);
				},
				claim: (tx, id, record) => {
					executor.claimIn(tx, runSettings, record, id);
					launched = record;
				},
				answer: (tx, answer) => recordAnswer(tx, request, answer, new Date().toISOString()),
			}),
		);
		if (replayed || !launched) {
			return result;
		}
		const ticket = `${launched.ticket.trimEnd()}\n\n${resumedNote}`;
		await desk.startRun(top, { ...launched, ticket }, result.run, runSettings);
		call.events.runsChanged(project, result.run);
		return result;
	},
});

/** The checkpoints' operations, in the table's order. */
export const checkpointOperations = [resumeRun];
