/**
 * What crosses a run's desk tools socket (glossary: Desk tools): one JSON line a connection each way.
 * The request carries the run's token; which run and which agent it is for is the socket's own,
 * never something a request says.
 */
import type { DeskErrorJson } from '../core/errors';
import type { DeskTool, ToolOutcome } from './dispatcher';

export type SocketRequest =
	| { readonly token: string; readonly op: 'list' }
	| {
			readonly token: string;
			readonly op: 'call';
			readonly name: string;
			readonly args: unknown;
			readonly key?: string;
			readonly harnessCallId?: string;
	  };

export type SocketReply =
	| { readonly ok: true; readonly tools: readonly DeskTool[] }
	| ToolOutcome
	| { readonly ok: false; readonly error: DeskErrorJson };

/** The most one request may be: a file's content in `asset_version` fits; an endless line does not. */
export const maxRequestBytes = 16 * 1024 * 1024;

/** sun_path holds 108 bytes with its NUL; Node truncates a longer path without a word. */
export const maxSocketPathBytes = 107;
