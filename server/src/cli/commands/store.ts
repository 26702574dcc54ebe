/**
 * `desk store …`: the library folder's upkeep: packing loose blobs, and the way back from a store
 * marked damaged.
 */
import { Desk, type StoreRecovery } from '../../desk';
import { expectArgs, UsageError } from '../args';
import type { Command, CommandContext } from '../context';
import { print } from '../output';
import { projectPath, repoTop } from '../projects';
import { terminalSafe as t } from '../terminal';

/** `desk store pack` */
async function storePack({ command, rest, out, open }: CommandContext): Promise<number> {
	expectArgs(rest, 0, command);
	const opened = await open();
	const result = opened.blobs.packLoose() ?? { packed: 0, corrupt: [], done: false };
	print(out, result, () =>
		[
			result.done
				? `${result.packed} loose blob${result.packed === 1 ? '' : 's'} packed`
				: 'another process is packing the store; try again when it is done',
			...result.corrupt.map((hash) => `not packed, its bytes do not match its name: ${t(hash)}`),
		].join('\n'),
	);
	return result.done ? 0 : 75;
}

/** `desk store recover --library restore|empty`, `desk store recover restore|empty|rebuild` */
async function storeRecover({ command, rest, values, out, store, logger, open }: CommandContext): Promise<number> {
	expectArgs(rest, 1, command);
	const choice = rest[0]!;
	if (choice !== 'restore' && choice !== 'empty' && choice !== 'rebuild') {
		throw new UsageError(`store recover takes restore, empty or rebuild, not ${JSON.stringify(choice)}`);
	}
	if (values.library && (values.project !== undefined || values.repo !== undefined)) {
		throw new UsageError('store recover takes --library or a project (--project, --repo), not both');
	}
	const result = values.library
		? await Desk.recoverLibrary(store, choice, logger)
		: await (async () => {
				const opened = await open();
				return opened.recoverProject(
					values.project ? projectPath(opened, values.project) : await repoTop(values.repo ?? process.cwd()),
					choice,
				);
			})();
	print(out, result, () => formatRecovery(result));
	return 0;
}

export const storeCommands: ReadonlyArray<[string, Command]> = [
	['store pack', storePack],
	['store recover', storeRecover],
];

function formatRecovery(r: StoreRecovery): string {
	const kept = r.keptAs ? `; the damaged copy stays at ${t(r.keptAs)}` : '';
	const lines = [
		r.choice === 'restore'
			? `${t(r.file)}: the kept copy ${t(r.keptAs ?? '')} is back in use`
			: `${t(r.file)}: started ${r.choice === 'rebuild' ? 'again' : 'empty'}${kept}`,
	];
	if (r.rebuilt) {
		lines.push(
			`rebuilt from refs/desk/history: ${r.rebuilt.added} object${r.rebuilt.added === 1 ? '' : 's'}${r.rebuilt.refused.length ? `, ${r.rebuilt.refused.length} refused` : ''}`,
		);
	}
	if (r.attachmentsKept) {
		lines.push(
			`${r.attachmentsKept} attachment file${r.attachmentsKept === 1 ? '' : 's'} no record names kept in .desk/attachments (never swept)`,
		);
	}
	return lines.join('\n');
}
