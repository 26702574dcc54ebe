import { spawn } from 'node:child_process';

/** A child process running `script` until stopped (a swapper, a writer; the script ends itself after its own time cap). */
export function background(script: string): { stop: () => Promise<unknown> } {
	const child = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
	const exited = new Promise((resolve) => child.on('exit', resolve));
	return {
		stop: () => {
			child.kill();
			return exited;
		},
	};
}

/**
 * Runs `step` until `enough()` says the race was met often enough, 10 s at most (a loaded machine
 * takes longer to meet it; the assertions after say whether it was met, never how fast).
 */
export async function race(enough: () => boolean | Promise<boolean>, step: () => Promise<void> | void): Promise<void> {
	const cap = Date.now() + 10_000;
	while (!(await enough()) && Date.now() < cap) {
		await step();
		await new Promise((resolve) => setImmediate(resolve));
	}
}

/**
 * A swapper process: exchanges `<folder>/<name>` for a link to `outside` as fast as it can, until
 * stopped (15 s at most). The real folder goes aside under a fresh name each time, so a writer that
 * makes a `<name>` of its own while the link is away (a missing folder on the way is made) cannot
 * wedge the swapper: the aside copy is then dropped and the writer's folder is swapped next.
 * With `refill`, `<name>/inside.txt` is written before each swap.
 */
export function swapFolderForLink(
	folder: string,
	outside: string,
	options: { name?: string; refill?: boolean } = {},
): { stop: () => Promise<unknown> } {
	const name = options.name ?? 'd';
	const refill = options.refill ? `fs.writeFileSync(p.join(d,'inside.txt'),'INSIDE\\n');` : '';
	return background(
		`const fs=require('fs'),p=require('path');const o=${JSON.stringify(folder)};const t=${JSON.stringify(outside)};const d=p.join(o,${JSON.stringify(name)});
		 for(let n=0,end=Date.now()+15000;Date.now()<end;n++){const aside=p.join(o,'.aside-'+n);
		  try{fs.mkdirSync(d,{recursive:true});${refill}}catch{}
		  try{fs.renameSync(d,aside);}catch{continue;}
		  try{fs.symlinkSync(t,d);for(let k=0;k<200;k++){fs.lstatSync(d);}fs.rmSync(d);}catch{}
		  try{fs.renameSync(aside,d);}catch{try{fs.rmSync(aside,{recursive:true,force:true});}catch{}}
		  for(let k=0;k<200;k++){fs.lstatSync(o);}}`,
	);
}
