/** The log levels of the `agentDesk.logLevel` setting, most severe first. */
export const logLevels = ['error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof logLevels)[number];

/** Where the core writes what a person may want to read later (the output channel, stderr). */
export interface Logger {
	error(message: string): void;
	warn(message: string): void;
	info(message: string): void;
	debug(message: string): void;
}

export function isLogLevel(value: unknown): value is LogLevel {
	return typeof value === 'string' && (logLevels as readonly string[]).includes(value);
}

/** Wraps a sink so that messages less severe than `level` (a value, or read at each message) are dropped. */
export function leveledLogger(
	level: LogLevel | (() => LogLevel),
	sink: (level: LogLevel, message: string) => void,
): Logger {
	const current = typeof level === 'function' ? level : () => level;
	const at = (l: LogLevel) => (message: string) => {
		if (logLevels.indexOf(l) <= logLevels.indexOf(current())) {
			sink(l, message);
		}
	};
	return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
}

export const silentLogger: Logger = { error() {}, warn() {}, info() {}, debug() {} };
