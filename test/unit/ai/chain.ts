import * as m from '../../../server/src/ai/model';
import type { AiObject, ArtifactRef } from '../../../server/src/ai/types';

/** A complete Intent → Plan → Task → Run → PatchSet → Evidence → Decision chain, made with the model's own API. */
export function completeChain(
	baseCommit: string,
	fileBlob = 'a'.repeat(40),
	options: { resultCommit?: string; touched?: string; artifact?: ArtifactRef } = {},
) {
	const human = m.actor('human', 'alice');
	const agent = m.actor('agent', 'claude-code');
	const intent = m.newIntent(human, 'Add pagination to the user list API');
	m.setIntentContent(intent, 'Add offset/limit pagination to GET /users, default page size 20');
	m.setIntentStatus(intent, 'active');
	const pipeline = m.newContextPipeline(agent, { maxFrames: 8 });
	const seed = m.pushFrame(pipeline, 'intent_analysis', 'offset/limit on GET /users');
	const plan = m.newPlan(agent, { pipeline, fwindow: [0, 1] });
	const step = m.newPlanStep('Add limit and offset query parameters');
	step.iframes.push(seed);
	m.addStep(plan, step);
	m.setStepStatus(step, 'progressing');
	m.setIntentPlan(intent, plan);
	const task = m.newTask(human, 'Paginate GET /users', { goal: 'feature', intent });
	m.addAcceptanceCriterion(task, 'All tests pass');
	const snapshot = m.newContextSnapshot(agent, 'explicit', [
		{ kind: 'file', path: 'file1.txt', blob: fileBlob, preview: 'content 1' },
	]);
	const run = m.newRun(agent, task, baseCommit, { plan });
	run.snapshot = snapshot.object_id;
	run.environment = { os: 'linux', arch: 'x64', cwd: '/work' };
	m.addRun(task, run);
	m.setTaskStatus(task, 'running');
	m.setRunStatus(run, 'patching');
	const read = m.newToolInvocation(
		agent,
		run,
		'read_file',
		{ path: 'src/users.ts' },
		{ read: ['src/users.ts'], resultSummary: '120 lines' },
	);
	const edit = m.newToolInvocation(
		agent,
		run,
		'edit_file',
		{ path: 'src/users.ts' },
		{ written: ['src/users.ts'], resultSummary: 'applied 2 hunks' },
	);
	const patchset = m.newPatchSet(agent, run, {
		artifact: options.artifact,
		rationale: 'Adds limit and offset with a default of 20',
	});
	patchset.touched.push({
		path: options.touched ?? 'src/users.ts',
		change_type: 'modified',
		lines_added: 14,
		lines_deleted: 3,
	});
	m.addPatchSet(run, patchset);
	m.setRunStatus(run, 'validating');
	const evidence = m.newEvidence(agent, run, 'test', 'npm', {
		patchset,
		command: 'npm test',
		exitCode: 0,
		summary: '42 passed',
	});
	const stepDone = m.pushFrame(pipeline, 'step_summary', 'Query parameters added');
	step.oframes.push(stepDone);
	m.setStepStatus(step, 'completed');
	const provenance = m.newProvenance(agent, run, 'anthropic', 'claude-sonnet-4');
	m.setTokenUsage(provenance, 1200, 300, 0.0125);
	const decision = m.newDecision(human, run, 'commit', {
		chosen: patchset,
		resultCommit: options.resultCommit ?? baseCommit,
		rationale: 'Tests pass',
	});
	m.setApplyStatus(patchset, 'applied');
	m.setRunStatus(run, 'completed');
	m.setTaskStatus(task, 'done');
	m.setIntentStatus(intent, 'completed', 'All tasks finished');
	const objects = { intent, pipeline, plan, task, snapshot, run, read, edit, patchset, evidence, provenance, decision };
	const all: AiObject[] = Object.values(objects);
	return { human, agent, step, ...objects, all };
}
