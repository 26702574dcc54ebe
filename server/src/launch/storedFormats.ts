import { DeskError } from '../core/errors';
import { readStoredObject } from '../core/storedJson';
import {
	plugRoles,
	type AssetPlug,
	type LaunchCard,
	type LaunchRecord,
	type LaunchTemplate,
	type PlugRole,
} from './types';

/**
 * The formats launch/ stores in the project database, and the one reader of each: the draft card
 * (`launch_card.json`) and the launch records (`launch_records.json`). Each is JSON with a `format`
 * number; a stored value without one was written before it had one and is format 1. A reader
 * refuses a format it does not know (`launch.unknownFormat`: a newer desk wrote it) and a value that
 * is not JSON or not of its format's shape (`launch.corrupt`), and returns a fresh object holding
 * only the fields of the format, so nothing is taken in with a cast.
 */

/** The format the desk writes; the readers know 1 only. */
export const launchCardFormat = 1;
export const launchRecordFormat = 1;

/** A launch card as stored. */
export function encodeLaunchCard(card: LaunchCard): string {
	return JSON.stringify({ format: launchCardFormat, ...card });
}

/** A launch record as stored. */
export function encodeLaunchRecord(record: LaunchRecord): string {
	return JSON.stringify({ format: launchRecordFormat, ...record });
}

/** The one reader of a stored launch card. */
export function readLaunchCard(text: string): LaunchCard {
	const value = new StoredValue('launch card', text, launchCardFormat);
	return {
		project: value.string('project'),
		ticket: value.string('ticket'),
		template: value.template('template'),
		plugs: value.list('plugs', (item, at) => value.plug(value.fields(item, at), at)),
	};
}

/** The one reader of a stored launch record. */
export function readLaunchRecord(text: string): LaunchRecord {
	const value = new StoredValue('launch record', text, launchRecordFormat);
	return {
		launch_id: value.string('launch_id'),
		created_at: value.string('created_at'),
		project: value.string('project'),
		ticket: value.string('ticket'),
		template: value.template('template'),
		plugs: value.list('plugs', (item, at) => {
			const plug = value.fields(item, at);
			return {
				...value.plug(plug, at),
				name: value.string('name', plug, `${at}.`),
				version: value.count('version', plug, `${at}.`),
			};
		}),
		intent: value.string('intent'),
		task: value.string('task'),
		run: value.string('run'),
	};
}

type Fields = Record<string, unknown>;

/** A stored JSON object being read: each accessor checks one field's shape and names it when it fails. */
class StoredValue {
	private readonly top: Fields;

	constructor(
		private readonly what: string,
		text: string,
		known: number,
	) {
		this.top = readStoredObject(text, known, {
			corrupt: (problem) => this.corrupt(`it is ${problem}`),
			unknownFormat: (format) =>
				new DeskError(
					'launch.unknownFormat',
					`A stored ${what} has format ${JSON.stringify(format).slice(0, 40)}; this desk reads format ${known}. A newer desk wrote it: update the desk.`,
					{
						what,
						format: typeof format === 'number' ? format : String(format).slice(0, 40),
						known,
					},
				),
		});
	}

	string(field: string, from: Fields = this.top, at = ''): string {
		const value = from[field];
		if (typeof value !== 'string') {
			throw this.corrupt(`${at}${field} is not a string`);
		}
		return value;
	}

	count(field: string, from: Fields, at: string): number {
		const value = from[field];
		if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
			throw this.corrupt(`${at}${field} is not a whole number`);
		}
		return value;
	}

	strings(field: string, from: Fields, at: string): string[] {
		return this.list(
			field,
			(item, itemAt) => {
				if (typeof item !== 'string') {
					throw this.corrupt(`${itemAt} is not a string`);
				}
				return item;
			},
			from,
			at,
		);
	}

	list<T>(field: string, read: (item: unknown, at: string) => T, from: Fields = this.top, at = ''): T[] {
		const value = from[field];
		if (!Array.isArray(value)) {
			throw this.corrupt(`${at}${field} is not a list`);
		}
		return value.map((item: unknown, i) => read(item, `${at}${field}[${i}]`));
	}

	template(field: string): LaunchTemplate {
		const value = this.fields(this.top[field], field);
		return { name: this.string('name', value, `${field}.`), nodes: this.strings('nodes', value, `${field}.`) };
	}

	fields(value: unknown, at: string): Fields {
		if (!isFields(value)) {
			throw this.corrupt(`${at} is not an object`);
		}
		return value;
	}

	plug(value: Fields, at: string): AssetPlug {
		const role = this.string('role', value, `${at}.`);
		if (!plugRoles.includes(role as PlugRole)) {
			throw this.corrupt(`${at}.role ${JSON.stringify(role.slice(0, 40))} is not a role`);
		}
		const copy = this.fields(value.copy, `${at}.copy`);
		return {
			id: this.string('id', value, `${at}.`),
			role: role as PlugRole,
			nodes: this.strings('nodes', value, `${at}.`),
			files: this.strings('files', value, `${at}.`),
			copy: Object.fromEntries(Object.keys(copy).map((from) => [from, this.string(from, copy, `${at}.copy.`)])),
		};
	}

	private corrupt(problem: string): DeskError {
		return new DeskError('launch.corrupt', `A stored ${this.what} cannot be read: ${problem}.`, {
			what: this.what,
			problem,
		});
	}
}

function isFields(value: unknown): value is Fields {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}
