import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import { isDeskError } from '../../../server/src/core/errors';
import { isAtGate } from '../../../server/src/runs/runViews';
import { globMatches, planSteps } from '../../../server/src/runs/prompt';
import { scrubBytes, scrubText } from '../../../server/src/core/secrets';
import { parseRunSettings } from '../../../server/src/runs/settings';
import type { Desk } from '../../../server/src/desk';
import { openDesk } from '../../helpers/deskFixture';
import { makeRepo } from '../../helpers/gitRepo';
import { scriptedAgentSettings } from '../../helpers/scriptedAgent';
import { tempDir } from '../../helpers/temp';

/** The skill careful-review, a folder of `root` imported into project shop. */
async function reviewSkill(desk: Desk, root: string) {
	const skillDir = path.join(root, 'review-skill');
	fs.mkdirSync(skillDir);
	fs.writeFileSync(
		path.join(skillDir, 'SKILL.md'),
		'---\nname: careful-review\ndescription: Review every change twice.\n---\nLook again before you finish.\n',
	);
	return (await desk.library.importDir({ dir: skillDir, project: 'shop', main: false })).asset;
}

it("each node's prompt has the ticket, the references with their read-only paths and inlined files, skills installed for Claude Code, copies, the outbox and its environment", async () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
	const desk = await openDesk(path.join(root, 'library'));
	await desk.openWorkspace([{ name: 'shop', path: repo }]);
	const specs = path.join(root, 'api-specs');
	fs.mkdirSync(path.join(specs, 'v2'), { recursive: true });
	fs.writeFileSync(path.join(specs, 'v2', 'orders.md'), 'Orders are listed ```newest``` first.\n');
	fs.writeFileSync(path.join(specs, 'v2', 'users.md'), 'Users.\n');
	fs.writeFileSync(path.join(specs, 'schema.json'), '{"type":"object"}\n');
	const spec = (await desk.library.importDir({ dir: specs, project: 'shop', main: false })).asset;
	const skill = await reviewSkill(desk, root);
	const prompts = path.join(root, 'prompts');
	fs.mkdirSync(prompts);
	const launches = await desk.launches(repo);
	launches.setTicket('List orders newest first');
	await launches.plug(spec.id, 'reference', {
		files: ['v2/orders.md', 'missing/*.md'],
		copy: { 'schema.json': 'api/schema.json' },
	});
	await launches.plug(skill.id, 'instructions', { nodes: ['work'] });
	const record = await launches.go();
	const { executor } = await desk.runs(repo);
	const settings = scriptedAgentSettings(
		{ echoPromptTo: prompts, writes: [{ path: 'orders.ts', content: 'x\n' }] },
		{ sandbox: 'off' },
	);
	const run = await executor.execute(record, record.run, settings);
	assert.ok(isAtGate(run), `${run.status}: ${run.error ?? ''}`);
	const plan = fs.readFileSync(path.join(prompts, 'plan.prompt.txt'), 'utf8');
	const work = fs.readFileSync(path.join(prompts, 'work.prompt.txt'), 'utf8');
	assert.match(plan, /^You are planning a change\. .*do not change any file/);
	assert.match(plan, /## Ticket\n\nList orders newest first/);
	const mount = desk.library.mount(spec.id, 1);
	assert.ok(plan.includes(`Files (read-only): ${mount}`), 'the reference is listed with its read-only path');
	assert.match(plan, /not instructions/);
	assert.ok(
		plan.includes('#### v2/orders.md\n\n````\nOrders are listed ```newest``` first.\n````'),
		'files are inlined in full, fenced longer than any fence inside',
	);
	assert.ok(!plan.includes('Users.'), 'only the files named are inlined');
	assert.match(plan, /\(missing\/\*\.md: matches no file of this version\)/);
	assert.ok(!plan.includes('careful-review'), 'the instructions plug reaches the work node only');
	assert.match(
		work,
		/careful-review: Review every change twice\. \(installed as a skill at \.claude\/skills\/careful-review\)/,
	);
	assert.match(work, /## Plan\n\n1\. Read the code\n2\. Make the change/);
	assert.ok(
		work.includes(path.join(repo, '.desk', 'attachments', 'outbox', record.task)),
		'the outbox path is in the prompt',
	);
	// copy: byte for byte into the checkout, and part of the change; the installed skill is not.
	assert.equal(fs.readFileSync(path.join(repo, 'api', 'schema.json'), 'utf8'), '{"type":"object"}\n');
	const ai = await desk.projectAi(repo);
	assert.deepEqual(
		ai.runPatchSets(run)[0]?.touched.map((t) => t.path),
		['api/schema.json', 'orders.ts'],
	);
	assert.equal(fs.existsSync(path.join(repo, '.claude')), false, 'the installed skill is removed after the run');
	const snapshot = ai.runSnapshot(run);
	assert.deepEqual(
		snapshot?.items.map((i) => [i.kind, i.path.replace(mount, 'MOUNT')]),
		[
			['file', 'MOUNT'],
			['file', 'MOUNT/v2/orders.md'],
			['snippet', '.claude/skills/careful-review'],
		],
	);
});

it('settings are checked field by field, with defaults for what is left out', () => {
	const defaults = parseRunSettings(undefined);
	assert.deepEqual(
		defaults.agents.map((a) => [a.name, a.format]),
		[
			['claude', 'claude-stream-json'],
			['codex', 'codex-json'],
		],
	);
	assert.equal(defaults.isolation, 'shared');
	assert.equal(defaults.maxFrames, 0, 'the pipeline keeps every frame unless told');
	const own = parseRunSettings({
		agents: [{ name: 'mine', command: './agent.sh', format: 'desk-jsonl', secretEnv: ['MY_TOKEN'] }],
		isolation: 'worktree',
		maxAttempts: 3,
		maxFrames: 12,
	});
	assert.equal(own.maxFrames, 12);
	assert.deepEqual(own.agents[0], {
		name: 'mine',
		command: './agent.sh',
		args: [],
		env: ['MY_TOKEN'],
		secretEnv: ['MY_TOKEN'],
		format: 'desk-jsonl',
		skills: 'inline',
		network: false,
		homeFiles: [],
		readPaths: [],
		writePaths: [],
		mcp: 'auto',
	});
	const cases: Array<[unknown, string]> = [
		[{ agents: {} }, 'agents'],
		[{ agents: [{ name: 'a b', command: 'x' }] }, 'agents[0].name'],
		[{ agents: [{ name: 'a', command: '' }] }, 'agents[0].command'],
		[{ agents: [{ name: 'a', command: 'x', args: [1] }] }, 'agents[0].args[0]'],
		[{ agents: [{ name: 'a', command: 'x', network: 'yes' }] }, 'agents[0].network'],
		[{ agents: [{ name: 'a', command: 'x', mcp: 'on' }] }, 'agents[0].mcp'],
		[{ agents: [{ name: 'a', command: 'x', skills: 'prompt' }] }, 'agents[0].skills'],
		[
			{
				agents: [
					{ name: 'a', command: 'x' },
					{ name: 'a', command: 'y' },
				],
			},
			'agents',
		],
		[{ isolation: 'container' }, 'isolation'],
		[{ maxAttempts: 0 }, 'maxAttempts'],
		[{ maxAttempts: 11 }, 'maxAttempts'],
		[{ maxFrames: -1 }, 'maxFrames'],
		[{ maxFrames: 2.5 }, 'maxFrames'],
		[{ maxFrames: '3' }, 'maxFrames'],
		[{ sandbox: 'on' }, 'sandbox'],
		[{ checks: [{ id: 't', executable: 'npm', cwd: '../up' }] }, 'checks[0].cwd'],
		[{ checks: [{ id: 't', executable: 'npm', timeout: 0 }] }, 'checks[0].timeout'],
	];
	for (const [value, field] of cases) {
		assert.throws(
			() => parseRunSettings(value),
			(e) => isDeskError(e, 'run.badSettings') && (e.data as { field: string }).field === field,
			JSON.stringify(value),
		);
	}
	assert.throws(
		() => parseRunSettings({ agent: 'nobody' }),
		(e) => isDeskError(e, 'run.unknownAgent'),
	);
});

it("an agent's skills setting: claude for Claude Code's format, inline for the rest, none when set so", () => {
	const agents = parseRunSettings({
		agents: [
			{ name: 'claude', command: 'claude', format: 'claude-stream-json' },
			{ name: 'aider', command: 'aider' },
			{ name: 'quiet', command: 'quiet', format: 'claude-stream-json', skills: 'none' },
		],
	}).agents;
	assert.deepEqual(
		agents.map((a) => [a.name, a.skills]),
		[
			['claude', 'claude'],
			['aider', 'inline'],
			['quiet', 'none'],
		],
	);
});

it('an agent whose skills is none is given no instructions: nothing installed, nothing in its prompts, and the run says so', async () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
	const desk = await openDesk(path.join(root, 'library'));
	await desk.openWorkspace([{ name: 'shop', path: repo }]);
	const skill = await reviewSkill(desk, root);
	const prompts = path.join(root, 'prompts');
	fs.mkdirSync(prompts);
	const launches = await desk.launches(repo);
	launches.setTicket('Tidy the orders');
	await launches.plug(skill.id, 'instructions');
	const record = await launches.go();
	const { executor } = await desk.runs(repo);
	const settings = scriptedAgentSettings(
		{ echoPromptTo: prompts, writes: [{ path: 'orders.ts', content: 'x\n' }] },
		{ sandbox: 'off' },
	);
	settings.agents[0]!.skills = 'none';
	const run = await executor.execute(record, record.run, settings);
	assert.ok(isAtGate(run), `${run.status}: ${run.error ?? ''}`);
	for (const node of ['plan', 'work']) {
		const prompt = fs.readFileSync(path.join(prompts, `${node}.prompt.txt`), 'utf8');
		assert.ok(!prompt.includes('careful-review') && !prompt.includes('Look again'), `${node}: no skill in the prompt`);
	}
	const ai = await desk.projectAi(repo);
	assert.deepEqual(
		ai.runPatchSets(run)[0]?.touched.map((t) => t.path),
		['orders.ts'],
		'nothing was installed in the checkout',
	);
	assert.equal(run.tags['desk.skills'], 'none');
	assert.deepEqual(
		ai.runSnapshot(run)?.items.map((i) => [i.kind, i.path, i.preview]),
		[
			[
				'snippet',
				'skill careful-review',
				'(not given: the agent takes no instructions) careful-review: Review every change twice.',
			],
		],
	);
});

it('a plan is read from the numbered or bulleted lines of the answer, else from its lines', () => {
	assert.deepEqual(planSteps('Here is the plan:\n\n1. Read **cart.ts**\n2) Add the discount\n- Test it\n\nDone.'), [
		'Read cart.ts',
		'Add the discount',
		'Test it',
	]);
	assert.deepEqual(planSteps('Read it.\nChange it.\n'), ['Read it.', 'Change it.']);
	assert.deepEqual(planSteps(''), []);
});

it("globs of a reference's files: * within a name, ** across folders, a folder names what is under it", () => {
	assert.equal(globMatches('*.md', 'a.md'), true);
	assert.equal(globMatches('*.md', 'v2/a.md'), false);
	assert.equal(globMatches('**/*.md', 'v2/deep/a.md'), true);
	assert.equal(globMatches('**/*.md', 'a.md'), true);
	assert.equal(globMatches('v2', 'v2/a.md'), true);
	assert.equal(globMatches('v?/a.md', 'v2/a.md'), true);
	assert.equal(globMatches('a.md', 'a-md'), false);
});

it('secrets are scrubbed as they are, and in base64, URL- and JSON-escaped forms', () => {
	const secret = 'sk-test/abc+"def"==';
	const text = `raw ${secret} b64 ${Buffer.from(secret).toString('base64')} url ${encodeURIComponent(secret)} json ${JSON.stringify(secret)}`;
	assert.equal(
		scrubText(text, [secret]),
		'raw [secret removed] b64 [secret removed] url [secret removed] json "[secret removed]"',
	);
	// Inside a longer base64 text the secret sits at any of three byte offsets: each is found.
	for (const offset of [0, 1, 2, 3, 4]) {
		const encoded = Buffer.concat([Buffer.alloc(offset, 7), Buffer.from(secret), Buffer.from('tail')]).toString(
			'base64',
		);
		assert.ok(scrubText(encoded, [secret]).includes('[secret removed]'), `offset ${offset}`);
	}
	// Bytes are searched as bytes: the binary around a secret is kept exactly.
	const binary = Buffer.concat([Buffer.from([0, 255, 254]), Buffer.from(secret), Buffer.from([128, 0])]);
	assert.deepEqual(
		scrubBytes(binary, [secret]),
		Buffer.concat([Buffer.from([0, 255, 254]), Buffer.from('[secret removed]'), Buffer.from([128, 0])]),
	);
	assert.equal(
		scrubText('short ab', ['ab']),
		'short ab',
		'values under 8 characters are not scrubbed wherever they occur',
	);
});
