import type { Migration } from '../../../server/src/store/durableDatabase';

export const crashMigrations: Migration[] = [
	{
		version: 1,
		statements: [
			'CREATE TABLE rows (n INTEGER PRIMARY KEY, payload TEXT NOT NULL)',
			'CREATE TABLE counter (id INTEGER PRIMARY KEY, value INTEGER NOT NULL)',
			'INSERT INTO counter (id, value) VALUES (1, 0)',
			// Ballast so that a full export takes long enough for kills to land inside it.
			'CREATE TABLE ballast (b BLOB)',
			'INSERT INTO ballast (b) VALUES (randomblob(3000000))',
		],
	},
];
