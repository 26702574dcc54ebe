/**
 * What every command gets: its name and arguments, where to print, and the desk opened on demand
 * (once; the entry closes it). A command returns the process's exit code.
 */
import type { Logger } from '../core/logger';
import type { Desk } from '../desk';
import type { ClientRequest } from '../store/clientRequests';
import type { OptionValues } from './args';
import type { Output } from './output';

export interface CommandContext {
	/** The command's name: `area verb` (`asset show`), or the area alone. */
	command: string;
	/** The second word of the command's name. */
	verb: string | undefined;
	/** The positionals after the command's name. */
	rest: string[];
	values: OptionValues;
	out: Output;
	/** The library folder: --store, else $DESK_STORE. */
	store: string;
	logger: Logger;
	/** --version, checked to be a version number. */
	version: number | undefined;
	/** Commands made from the command line are desk tool calls (made_by conductor; glossary: made_by). */
	madeBy: 'conductor';
	/** Opens the desk on the library folder. */
	open(): Promise<Desk>;
	/** The library of the opened desk. */
	lib(): Promise<Desk['library']>;
	/** --request-id: the caller's id for this action; running the command again with it repeats nothing. */
	requestOf(action: string, params: object): { request?: ClientRequest };
}

/** One command (or several sharing their set-up): the exit code. */
export type Command = (context: CommandContext) => Promise<number>;
