/**
 * `desk` (dist/desk.js): starts the command line of dist/deskMain.js from V8's code cache. Compiling
 * the command line's 850 KB costs every `desk` process 30 ms, a tenth of a short command; from the
 * cache it costs a few. The cache is made by the first process that finds none (once its command, so
 * its modules have loaded) and kept beside the bundle, named by the bundle's
 * digest and V8's version, so a rebuilt bundle or another Node never loads it; V8 refuses data that
 * does not fit, and then the source is compiled as usual. Where the folder cannot be written (a
 * read-only install, a run's sandbox) every process compiles, as without a cache.
 *
 * Only node builtins here: this file is what runs before the cache helps.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import * as vm from 'node:vm';

type ModuleWrapper = (
	exports: object,
	require: NodeJS.Require,
	module: { exports: object },
	filename: string,
	dirname: string,
) => void;

function launch(): void {
	const mainFile = path.join(__dirname, 'deskMain.js');
	const source = fs.readFileSync(mainFile, 'utf8');
	const digest = createHash('sha256').update(source).digest('hex').slice(0, 20);
	const cacheFile = path.join(
		__dirname,
		'code-cache',
		`deskMain-${digest}-${process.arch}-v8-${process.versions.v8.replace(/[^0-9A-Za-z.-]/g, '_')}.bin`,
	);
	const cachedData = readCache(cacheFile);
	const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
		filename: mainFile,
		cachedData,
	});
	const deskModule = { exports: {} as { runAsProcess?: () => void } };
	const wrapper = script.runInThisContext() as ModuleWrapper;
	wrapper.call(deskModule.exports, deskModule.exports, createRequire(mainFile), deskModule, mainFile, __dirname);
	// Made before the command runs: a command may change V8's flags (see main.ts), and data made
	// under other flags is refused by the next process.
	if (cachedData === undefined || script.cachedDataRejected) {
		writeCache(cacheFile, script);
	}
	deskModule.exports.runAsProcess!();
}

/** The cache's bytes, from a regular file of this user (never through a link). */
function readCache(file: string): Buffer | undefined {
	let fd: number | undefined;
	try {
		fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
		const stat = fs.fstatSync(fd);
		if (!stat.isFile() || (process.getuid !== undefined && stat.uid !== process.getuid())) {
			return undefined;
		}
		return fs.readFileSync(fd);
	} catch {
		return undefined;
	} finally {
		if (fd !== undefined) {
			fs.closeSync(fd);
		}
	}
}

/** Written whole by rename, so a process never reads half of one; a folder that cannot be written is left alone. */
function writeCache(file: string, script: vm.Script): void {
	const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
	try {
		fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o755 });
		fs.writeFileSync(temp, script.createCachedData(), { flag: 'wx', mode: 0o644 });
		fs.renameSync(temp, file);
		// Caches of earlier builds are of no use to anyone now.
		for (const name of fs.readdirSync(path.dirname(file))) {
			if (name.startsWith('deskMain-') && !file.endsWith(name) && !name.endsWith('.tmp')) {
				fs.rmSync(path.join(path.dirname(file), name), { force: true });
			}
		}
	} catch {
		fs.rmSync(temp, { force: true });
	}
}

launch();
