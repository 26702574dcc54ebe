import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { newSkillFile, parseSkillFile, skillFileProblem } from '../../../server/src/assets/skill';
import { ImportAsset } from '../../../server/src/protocol/protocol';
import type { DeskClient } from '../common/deskClient';
import { guardedBy } from '../common/guarded';
import { showInformationMessage, showStatusMessage } from '../common/messages';
import { chooseProject } from '../common/windowProjects';
import type { AssetsTreeProvider, AssetsViewNode } from './assetsTree';
import { addedSkillText } from './assetText';

interface Way extends vscode.QuickPickItem {
	way: 'create' | 'folder';
}

/** A folder's name as a skill's name: lowercase letters, digits and single hyphens. */
export function skillNameOf(folderName: string): string {
	return folderName
		.toLowerCase()
		.replace(/[^a-z0-9]+/g, '-')
		.replace(/^-+|-+$/g, '')
		.slice(0, 64)
		.replace(/-+$/, '');
}

/**
 * Add Skill…: a skill is a folder with a SKILL.md naming it and saying when to use it (glossary:
 * Kind), and its kind is set when it is added. So a new skill is made with its SKILL.md in
 * version 1, and a folder without a valid one is offered a SKILL.md before it is added, never
 * added as a plain folder by surprise.
 */
export function registerAddSkill(
	desk: DeskClient,
	assets: AssetsTreeProvider,
	reportError: (error: unknown) => void,
): vscode.Disposable {
	const guarded = guardedBy(reportError);

	const askDescription = (name: string) =>
		vscode.window.showInputBox({
			title: `Skill ${name}: description`,
			prompt:
				'What it does and when an agent should use it, on one line. Agents and the launch card match tickets on it.',
			placeHolder: 'Reviews SQL migrations; use it when a change touches db/migrations',
			validateInput: (v) => skillFileProblem(name, v),
		});

	const openSkillFile = async (folder: string) => {
		await vscode.window.showTextDocument(vscode.Uri.file(path.join(folder, 'SKILL.md')), { preview: false });
	};

	const create = async (node?: AssetsViewNode) => {
		const project = await chooseProject(assets.windowProjects, node);
		const name = await vscode.window.showInputBox({
			title: 'New Skill: name',
			prompt: 'Lowercase letters, digits and hyphens, as agents name skills',
			placeHolder: 'sql-review',
			validateInput: (v) => skillFileProblem(v, 'a description'),
		});
		if (!name) {
			return;
		}
		const description = await askDescription(name);
		if (!description) {
			return;
		}
		const result = await desk.requestOnce(ImportAsset, {
			newName: name,
			skillDescription: description,
			...(project ? { project: project.name } : {}),
		});
		await openSkillFile(result.asset.working_dir);
		showStatusMessage(
			`Agent Desk: skill ${result.asset.name} created; write its steps in SKILL.md, then Snapshot Now.`,
		);
	};

	const addFolder = async (node?: AssetsViewNode) => {
		const project = await chooseProject(assets.windowProjects, node);
		const picked = await vscode.window.showOpenDialog({
			canSelectFolders: true,
			canSelectFiles: false,
			canSelectMany: false,
			openLabel: 'Add Skill',
			title: 'Add a skill folder (a folder with a SKILL.md)',
		});
		const folder = picked?.[0];
		if (!folder) {
			return;
		}
		const skillFile = vscode.Uri.joinPath(folder, 'SKILL.md');
		let text: string | undefined;
		try {
			text = Buffer.from(await vscode.workspace.fs.readFile(skillFile)).toString('utf8');
		} catch {
			text = undefined;
		}
		if (text === undefined || !parseSkillFile(text)) {
			const write = 'Write SKILL.md';
			const choice = await showInformationMessage(
				`${path.basename(folder.fsPath)} has ${text === undefined ? 'no SKILL.md' : 'a SKILL.md without a name and a description in its front matter'}: added as it is, it would be a plain folder, not a skill.`,
				{
					modal: true,
					detail:
						text === undefined
							? 'Write one with a name and a description, then add the folder as a skill.'
							: 'Fix its front matter (--- name: … description: … ---) and add the folder again.',
				},
				...(text === undefined ? [write] : []),
			);
			if (choice !== write) {
				return;
			}
			const name = skillNameOf(path.basename(folder.fsPath));
			const description = await askDescription(name || 'skill');
			if (!description || !name) {
				return;
			}
			// `wx`: a SKILL.md that appeared meanwhile is the person's, not ours to overwrite.
			await fs.writeFile(skillFile.fsPath, newSkillFile(name, description), { flag: 'wx' });
		}
		const result = await desk.requestOnce(ImportAsset, {
			dir: folder.fsPath,
			...(project ? { project: project.name } : {}),
		});
		const added = addedSkillText(result);
		// What the folder held that its first version does not store needs the person, as for Add Folder.
		if (added.notStored) {
			void showInformationMessage(added.text);
		} else {
			showStatusMessage(added.text);
		}
	};

	return vscode.commands.registerCommand(
		'agentDesk.addSkill',
		guarded(async (node?: AssetsViewNode) => {
			const ways: Way[] = [
				{
					way: 'create',
					label: '$(new-file) Create a New Skill…',
					detail: 'A folder the desk keeps, with a SKILL.md you finish in the editor',
				},
				{
					way: 'folder',
					label: '$(folder-opened) Add a Skill Folder…',
					detail: 'A folder that has a SKILL.md (one without is offered one)',
				},
			];
			const way = await vscode.window.showQuickPick(ways, { title: 'Add Skill' });
			if (way?.way === 'create') {
				await create(node);
			} else if (way?.way === 'folder') {
				await addFolder(node);
			}
		}),
	);
}
