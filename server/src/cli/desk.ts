/**
 * `desk`: the command line over the same desk core as the extension's server, for scripts, CI and
 * agents. Every command prints JSON with --json (records with the field names of seed 000) and
 * human-readable text without it. Exit codes: 0 ok, 2 refused by the desk (the error is printed as
 * JSON with --json), 64 bad usage, 70 internal error.
 */
import { parseArgs } from 'node:util';
import { Desk } from '../desk';
import { DeskError, describeError } from '../core/errors';
import { leveledLogger, type LogLevel } from '../core/logger';
import type { AssetSummary, GitVersion } from '../assets/types';

const usage = `Usage: desk [--store DIR] [--json] [--verbose] COMMAND

The library folder is --store, else $DESK_STORE.

Commands:
  assets list [--project NAME]                         list the library's assets
  asset import --dir PATH --project NAME [--main]      adopt a repository's top as a git asset
  asset versions ID                                    list an asset's versions, oldest first
`;

class UsageError extends Error {}

interface Output {
	json: boolean;
	write(text: string): void;
}

export async function main(argv: string[], out: Output = { json: false, write: (t) => process.stdout.write(t) }): Promise<number> {
	let parsed;
	try {
		parsed = parseArgs({
			args: argv,
			allowPositionals: true,
			strict: true,
			options: {
				store: { type: 'string' },
				json: { type: 'boolean', default: false },
				verbose: { type: 'boolean', short: 'v', default: false },
				help: { type: 'boolean', short: 'h', default: false },
				dir: { type: 'string' },
				project: { type: 'string' },
				main: { type: 'boolean', default: false },
			},
		});
	} catch (error) {
		process.stderr.write(`desk: ${(error as Error).message}\n\n${usage}`);
		return 64;
	}
	const { values, positionals } = parsed;
	out.json = values.json ?? false;
	if (values.help || positionals.length === 0) {
		process.stdout.write(usage);
		return values.help ? 0 : 64;
	}
	const store = values.store ?? process.env['DESK_STORE'];
	if (!store) {
		process.stderr.write(`desk: no library folder: pass --store DIR or set DESK_STORE\n`);
		return 64;
	}
	const level: LogLevel = values.verbose ? 'debug' : 'warn';
	const logger = leveledLogger(level, (l, message) => process.stderr.write(`[${l}] ${message}\n`));

	let desk: Desk | undefined;
	try {
		const [area, verb, ...rest] = positionals;
		const command = `${area} ${verb ?? ''}`.trim();
		desk = await Desk.open({ libraryDir: store, logger });
		switch (command) {
			case 'assets list': {
				expectArgs(rest, 0, command);
				const assets = await desk.library.listAssets(values.project);
				print(out, assets, () => assets.map(formatAsset).join('\n') || '(no assets)');
				return 0;
			}
			case 'asset import': {
				expectArgs(rest, 0, command);
				if (!values.dir || !values.project) {
					throw new UsageError('asset import needs --dir PATH and --project NAME');
				}
				const result = await desk.library.importDir({ dir: values.dir, project: values.project, main: values.main ?? false });
				if (result.created) {
					logger.info(`asset imported: ${result.asset.id} ${result.asset.name} ${result.asset.working_dir} (${result.asset.created_by})`);
				}
				print(out, result, () => `${result.created ? 'imported' : 'already in the library'}: ${result.asset.id} ${result.asset.name} ${result.asset.working_dir} (project ${result.project.name}${result.project.main_asset === result.asset.id ? ', main asset' : ''})`);
				return 0;
			}
			case 'asset versions': {
				expectArgs(rest, 1, command);
				const versions = await desk.library.versions(rest[0]!);
				print(out, versions, () => versions.map(formatVersion).join('\n') || '(no versions)');
				return 0;
			}
			default:
				throw new UsageError(`unknown command: ${positionals.join(' ')}`);
		}
	} catch (error) {
		if (error instanceof UsageError) {
			process.stderr.write(`desk: ${error.message}\n\n${usage}`);
			return 64;
		}
		if (error instanceof DeskError) {
			if (out.json) {
				out.write(JSON.stringify({ error: error.toJSON() }, null, 2) + '\n');
			}
			process.stderr.write(`desk: ${describeError(error)}\n`);
			return 2;
		}
		process.stderr.write(`desk: internal error: ${(error as Error).stack ?? String(error)}\n`);
		return 70;
	} finally {
		desk?.close();
	}
}

function expectArgs(rest: string[], count: number, command: string): void {
	if (rest.length !== count) {
		throw new UsageError(`${command} takes ${count === 0 ? 'no arguments' : `${count} argument${count > 1 ? 's' : ''}`}`);
	}
}

function print(out: Output, value: unknown, human: () => string): void {
	out.write(out.json ? JSON.stringify(value, null, 2) + '\n' : human() + '\n');
}

function formatAsset(a: AssetSummary): string {
	const main = a.projects.some((p) => p.main) ? ' (main)' : '';
	const versions = a.engine === 'none' ? '' : ` ${a.version_count} version${a.version_count === 1 ? '' : 's'}`;
	return `${a.id}  ${a.name}${main}  ${a.kind || '-'}  ${a.engine}${a.branch ? ` ${a.branch}` : ''}${versions}  ${a.working_dir}`;
}

function formatVersion(v: GitVersion): string {
	const flags = [v.made_by, v.head_at ? `head ${v.head_at}` : '', v.never_head ? 'never head' : ''].filter(Boolean).join(', ');
	return `v${v.version}  ${v.commit.slice(0, 12)}  ${v.made_at}  ${v.subject}  (${flags})`;
}

if (require.main === module) {
	main(process.argv.slice(2)).then(
		(code) => {
			process.exitCode = code;
		},
		(error: unknown) => {
			process.stderr.write(`desk: internal error: ${String(error)}\n`);
			process.exitCode = 70;
		},
	);
}
