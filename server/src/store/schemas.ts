import type { Migration } from './durableDatabase';

/**
 * Schema migrations by version. A migration, once released, is never edited: a change is a new
 * version. The database records its schema name and version in `desk_meta`.
 */

/**
 * The table of requests a client sent with a request id, created by a migration of each database
 * (library v5, project v7). Part of two migrations already run on people's stores: never change it;
 * a later change is a new migration. The text is as both first wrote it (sqlite_master keeps it byte for byte).
 */
const createClientRequests = `CREATE TABLE client_requests (
				request_id TEXT PRIMARY KEY,
				method TEXT NOT NULL,
				params_hash TEXT NOT NULL,
				result TEXT NOT NULL,
				created_at TEXT NOT NULL
			)`;

export const librarySchema = 'agent-desk-library';

/** Who answered a proposal whose asset was retired before retiring answered proposals (migration 7). */
export const retiredBeforeAnswers = 'the retirement of its asset';

export const libraryMigrations: readonly Migration[] = [
	{
		version: 1,
		statements: [
			`CREATE TABLE assets (
				id TEXT PRIMARY KEY CHECK (id GLOB 'a-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]'),
				name TEXT NOT NULL,
				kind TEXT NOT NULL DEFAULT '',
				about TEXT NOT NULL DEFAULT '',
				working_dir TEXT NOT NULL DEFAULT '',
				engine TEXT NOT NULL CHECK (engine IN ('snapshot', 'git', 'none')),
				picked_version INTEGER NOT NULL DEFAULT 0,
				remote TEXT NOT NULL DEFAULT '',
				branch TEXT NOT NULL DEFAULT '',
				url TEXT NOT NULL DEFAULT '',
				notes TEXT NOT NULL DEFAULT '',
				tags TEXT NOT NULL DEFAULT '[]',
				created_at TEXT NOT NULL,
				created_by TEXT NOT NULL
			)`,
			// Adopting the same checkout and remote again returns the record already there.
			`CREATE UNIQUE INDEX assets_git_checkout ON assets (working_dir, remote) WHERE engine = 'git'`,
			`CREATE TABLE projects (
				name TEXT PRIMARY KEY,
				path TEXT NOT NULL DEFAULT '',
				main_asset TEXT NOT NULL DEFAULT '',
				created_at TEXT NOT NULL
			)`,
			`CREATE INDEX projects_path ON projects (path) WHERE path <> ''`,
			`CREATE TABLE project_assets (
				project TEXT NOT NULL REFERENCES projects (name) ON DELETE CASCADE,
				asset_id TEXT NOT NULL REFERENCES assets (id),
				position INTEGER NOT NULL,
				added_at TEXT NOT NULL,
				PRIMARY KEY (project, asset_id)
			)`,
			// Observations are attached to commits, not to version numbers, so a rewritten branch keeps them.
			`CREATE TABLE git_heads (
				asset_id TEXT NOT NULL REFERENCES assets (id),
				commit_oid TEXT NOT NULL,
				head_at TEXT NOT NULL,
				made_by TEXT NOT NULL CHECK (made_by IN ('run', 'sync', 'outside')),
				PRIMARY KEY (asset_id, commit_oid)
			)`,
		],
	},
	{
		version: 2,
		statements: [
			'ALTER TABLE assets ADD COLUMN about_model_written INTEGER NOT NULL DEFAULT 0',
			"ALTER TABLE assets ADD COLUMN derived_from TEXT NOT NULL DEFAULT ''",
			'ALTER TABLE assets ADD COLUMN derived_from_version INTEGER NOT NULL DEFAULT 0',
			"ALTER TABLE assets ADD COLUMN checks TEXT NOT NULL DEFAULT '[]'",
			'ALTER TABLE assets ADD COLUMN retired INTEGER NOT NULL DEFAULT 0',
			// Snapshot versions: manifests over the blob store, never rewritten (glossary: Version).
			`CREATE TABLE snapshot_versions (
				asset_id TEXT NOT NULL REFERENCES assets (id),
				version INTEGER NOT NULL CHECK (version >= 1),
				manifest TEXT NOT NULL,
				file_count INTEGER NOT NULL,
				bytes INTEGER NOT NULL,
				note TEXT NOT NULL DEFAULT '',
				made_at TEXT NOT NULL,
				made_by TEXT NOT NULL CHECK (made_by IN ('run', 'user', 'outside', 'conductor')),
				PRIMARY KEY (asset_id, version)
			)`,
			// The plugs of launch records ("used in"; glossary: Used in); runs fill it.
			`CREATE TABLE launch_plugs (
				launch_id TEXT NOT NULL,
				project TEXT NOT NULL,
				asset_id TEXT NOT NULL REFERENCES assets (id),
				role TEXT NOT NULL CHECK (role IN ('reference', 'target', 'instructions')),
				version INTEGER NOT NULL,
				launched_at TEXT NOT NULL,
				PRIMARY KEY (launch_id, asset_id)
			)`,
			'CREATE INDEX launch_plugs_asset ON launch_plugs (asset_id)',
		],
	},
	{
		version: 3,
		statements: [
			// The branch tip and version count last seen per git asset: a tip that is no longer on the
			// first-parent chain means the branch was rewritten and numbers after the fork changed.
			`CREATE TABLE git_tips (
				asset_id TEXT PRIMARY KEY REFERENCES assets (id),
				tip TEXT NOT NULL,
				count INTEGER NOT NULL,
				seen_at TEXT NOT NULL
			)`,
		],
	},
	{
		version: 4,
		statements: [
			// Package gitdir (issue 12): where a git asset's git folder really was when it was adopted
			// ('' for assets adopted before: filled the next time the adoption rule takes it), and
			// whether the person allowed it although the rule did not. Reads use this folder; a `.git`
			// that names another one later is refused.
			"ALTER TABLE assets ADD COLUMN git_dir TEXT NOT NULL DEFAULT ''",
			'ALTER TABLE assets ADD COLUMN git_dir_allowed INTEGER NOT NULL DEFAULT 0',
		],
	},
	{
		version: 5,
		statements: [
			// Requests a client sent with a request id (a new asset, a link, a note, a snapshot, a
			// version): a repeat with the same id returns the stored result and changes nothing.
			// Written in the same transaction as the effect.
			createClientRequests,
		],
	},
	{
		version: 6,
		statements: [
			// Proposals to retire an asset (glossary: Retired): an agent proposes, the person accepts
			// (the asset is retired in the same transaction) or declines. One open proposal an asset.
			`CREATE TABLE retire_proposals (
				id TEXT PRIMARY KEY,
				asset_id TEXT NOT NULL REFERENCES assets (id),
				reason TEXT NOT NULL,
				proposed_by TEXT NOT NULL,
				run_id TEXT NOT NULL DEFAULT '',
				created_at TEXT NOT NULL,
				state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'accepted', 'declined')),
				answered_by TEXT NOT NULL DEFAULT '',
				answered_at TEXT NOT NULL DEFAULT ''
			)`,
			"CREATE UNIQUE INDEX retire_proposals_open ON retire_proposals (asset_id) WHERE state = 'open'",
		],
	},
	{
		version: 7,
		statements: [
			// Retiring an asset answers its open proposal (accepted, by whoever retired it), but only
			// since a change made after schema 6: an asset retired before it kept its proposal open, to
			// come back as a question once unretired. Answered now as a retirement answers it, by the
			// retirement (who retired it was not recorded).
			`UPDATE retire_proposals
			 SET state = 'accepted', answered_by = '${retiredBeforeAnswers}', answered_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
			 WHERE state = 'open' AND asset_id IN (SELECT id FROM assets WHERE retired = 1)`,
		],
	},
];

export const projectSchema = 'agent-desk-project';

export const projectMigrations: readonly Migration[] = [
	{
		version: 1,
		statements: [
			// Which library project this repository's desk data belongs to; AI objects, runs and
			// attachments join it in later versions.
			`CREATE TABLE project_info (
				key TEXT PRIMARY KEY,
				value TEXT NOT NULL
			)`,
		],
	},
	{
		version: 2,
		statements: [
			// AI objects (glossary: AI objects) as their canonical JSON, with the references the views follow
			// pulled out into columns: task (Run), run (PatchSet, Evidence, Decision, Provenance,
			// ToolInvocation), parent (Intent, Task), previous (Plan), intent (Task).
			`CREATE TABLE ai_objects (
				object_id TEXT PRIMARY KEY,
				object_type TEXT NOT NULL,
				created_at TEXT NOT NULL,
				updated_at TEXT NOT NULL,
				ref_task TEXT,
				ref_run TEXT,
				ref_parent TEXT,
				ref_intent TEXT,
				hash TEXT NOT NULL,
				json TEXT NOT NULL
			)`,
			'CREATE INDEX ai_objects_type ON ai_objects (object_type, object_id)',
			'CREATE INDEX ai_objects_run ON ai_objects (ref_run, object_type)',
			'CREATE INDEX ai_objects_task ON ai_objects (ref_task)',
			'CREATE INDEX ai_objects_parent ON ai_objects (ref_parent)',
			'CREATE INDEX ai_objects_intent ON ai_objects (ref_intent)',
		],
	},
	{
		version: 3,
		statements: [
			// The project's launch card being written (a draft survives a reload of the window).
			`CREATE TABLE launch_card (
				id INTEGER PRIMARY KEY CHECK (id = 1),
				json TEXT NOT NULL,
				updated_at TEXT NOT NULL
			)`,
			// What each Go froze: the card, the ticket, every plug with its role and version, and the
			// Intent, Task and Run it made.
			`CREATE TABLE launch_records (
				launch_id TEXT PRIMARY KEY,
				created_at TEXT NOT NULL,
				json TEXT NOT NULL
			)`,
		],
	},
	{
		version: 4,
		statements: [
			// How each executed run is carried out, beside its Run object: which process runs it (a
			// run whose process is gone is failed on the next start), the agent's process group (so
			// another process can cancel it), the folder it works in and what the desk installed there.
			`CREATE TABLE run_control (
				run_id TEXT PRIMARY KEY,
				launch_id TEXT NOT NULL,
				runner_pid INTEGER NOT NULL,
				runner_token TEXT NOT NULL,
				agent_pgid INTEGER,
				cancel_reason TEXT,
				json TEXT NOT NULL,
				updated_at TEXT NOT NULL
			)`,
		],
	},
	{
		version: 5,
		statements: [
			// Attachments (glossary: Attachment): the bytes are in .desk/attachments/<id>; the name is a label.
			`CREATE TABLE attachments (
				id TEXT PRIMARY KEY,
				task_id TEXT NOT NULL,
				name TEXT NOT NULL,
				size INTEGER NOT NULL,
				sha256 TEXT NOT NULL,
				media_type TEXT NOT NULL,
				source TEXT NOT NULL,
				run_id TEXT,
				note TEXT NOT NULL,
				added_by TEXT NOT NULL,
				created_at TEXT NOT NULL,
				unavailable TEXT
			)`,
			'CREATE INDEX attachments_task ON attachments (task_id, created_at)',
			// Who deleted what, through which surface.
			`CREATE TABLE attachment_audit (
				seq INTEGER PRIMARY KEY AUTOINCREMENT,
				attachment_id TEXT NOT NULL,
				task_id TEXT NOT NULL,
				name TEXT NOT NULL,
				action TEXT NOT NULL,
				actor TEXT NOT NULL,
				via TEXT NOT NULL,
				at TEXT NOT NULL
			)`,
			// The project's journal: one line per event beside the tasks' history (ingests, deletions).
			`CREATE TABLE project_journal (
				seq INTEGER PRIMARY KEY AUTOINCREMENT,
				at TEXT NOT NULL,
				task_id TEXT,
				kind TEXT NOT NULL,
				line TEXT NOT NULL
			)`,
		],
	},
	{
		version: 6,
		statements: [
			// Which process is making a run's decision now: two windows (or a window and the command
			// line) never decide one run twice.
			'ALTER TABLE run_control ADD COLUMN deciding TEXT',
		],
	},
	{
		version: 7,
		statements: [
			// Requests a client sent with a request id (Go, attach): a repeat with the same id returns
			// the stored result and changes nothing. Written in the same transaction as the effect.
			createClientRequests,
			// Launches whose plugs are not yet recorded in the library's launch_plugs ("used in"): Go
			// writes the row with the launch, and it is removed once the library has them, so a desk
			// stopped in between records them on its next start.
			`CREATE TABLE launch_uses_pending (
				launch_id TEXT PRIMARY KEY
			)`,
		],
	},
	{
		version: 8,
		statements: [
			// Lineage (glossary: Lineage). The listed roots of the project: `main` is listed when the
			// project's lineage is first opened; `tally_task` is the Task the first branch of the root
			// made its tally (glossary: Tally), NULL while the root is empty.
			`CREATE TABLE lineage_roots (
				name TEXT PRIMARY KEY,
				about TEXT NOT NULL,
				listed_at TEXT NOT NULL,
				listed_by TEXT NOT NULL,
				tally_task TEXT UNIQUE
			)`,
			// One row per tally and per branch (a Task): the conversation the person drives has none.
			// `fork_of` is what was forked (the tally, or a branch for a branch of a branch),
			// `starter_node`/`starter_run` who started it (NULL run: the person), `grant_chain` the JSON
			// array of the chain (glossary: Lineage), `config` the branch configuration frozen at the
			// fork, `queued` 1 while it waits for the shared checkout.
			`CREATE TABLE lineage_nodes (
				node_id TEXT PRIMARY KEY,
				kind TEXT NOT NULL CHECK (kind IN ('tally', 'branch')),
				root TEXT NOT NULL,
				fork_of TEXT,
				starter_node TEXT,
				starter_run TEXT,
				grant_chain TEXT NOT NULL,
				depth INTEGER NOT NULL,
				config TEXT NOT NULL,
				queued INTEGER NOT NULL DEFAULT 0,
				created_at TEXT NOT NULL
			)`,
			'CREATE INDEX lineage_nodes_starter ON lineage_nodes (starter_node)',
			'CREATE INDEX lineage_nodes_root ON lineage_nodes (root, kind)',
			// Every node's board: what was said to it and by it. `request_id` is the stable id of the
			// effect that wrote the row, so a repeat after a restart writes nothing twice.
			`CREATE TABLE board_messages (
				seq INTEGER PRIMARY KEY AUTOINCREMENT,
				message_id TEXT NOT NULL UNIQUE,
				request_id TEXT NOT NULL UNIQUE,
				node TEXT NOT NULL,
				kind TEXT NOT NULL,
				from_node TEXT,
				from_run TEXT,
				reply_enabled INTEGER NOT NULL,
				in_reply_to TEXT,
				passive INTEGER NOT NULL,
				frozen INTEGER NOT NULL DEFAULT 0,
				superseded_by TEXT,
				text TEXT NOT NULL,
				data TEXT,
				created_at TEXT NOT NULL
			)`,
			'CREATE INDEX board_messages_node ON board_messages (node, seq)',
			'CREATE INDEX board_messages_reply ON board_messages (in_reply_to)',
			// The phases of delivering a branch's input and its report, each once: `dlv:<branch>` with
			// phases input, reply (the report on the branch's board) and delivered (on the starter's).
			`CREATE TABLE board_deliveries (
				delivery_id TEXT NOT NULL,
				phase TEXT NOT NULL CHECK (phase IN ('input', 'reply', 'delivered')),
				request_id TEXT NOT NULL UNIQUE,
				message_id TEXT,
				at TEXT NOT NULL,
				PRIMARY KEY (delivery_id, phase)
			)`,
			// Receipts of lineage calls (branch, prompt, post, answer): the caller's node (a Task, or
			// 'person') and its key; the same key again returns `result`, with other params it is refused.
			`CREATE TABLE call_receipts (
				scope TEXT NOT NULL,
				request_key TEXT NOT NULL,
				tool TEXT NOT NULL,
				request_hash TEXT NOT NULL,
				harness_call_id TEXT,
				run_id TEXT,
				result TEXT NOT NULL,
				at TEXT NOT NULL,
				PRIMARY KEY (scope, request_key)
			)`,
			// Catch-up (glossary: Catch-up): the tip of the target ref a node last saw and the tally
			// section made from it, so an unchanged tip costs no commit walk.
			`CREATE TABLE lineage_catchup (
				node TEXT NOT NULL,
				ref TEXT NOT NULL,
				baseline TEXT NOT NULL,
				section TEXT NOT NULL,
				at TEXT NOT NULL,
				PRIMARY KEY (node, ref)
			)`,
			// Project memory (glossary: Project memory) lives in .desk-memory/<root>.json; the database
			// holds only the batches not yet applied to it (deleted once applied) and, in lineage_memos,
			// the summary model's answers (keyed by model and input), never the memories themselves.
			`CREATE TABLE memory_queue (
				seq INTEGER PRIMARY KEY AUTOINCREMENT,
				root TEXT NOT NULL,
				request_id TEXT NOT NULL UNIQUE,
				batch TEXT NOT NULL,
				enqueued_at TEXT NOT NULL
			)`,
			`CREATE TABLE lineage_memos (
				memo_key TEXT PRIMARY KEY,
				model TEXT NOT NULL,
				input_sha256 TEXT NOT NULL,
				answer TEXT NOT NULL,
				at TEXT NOT NULL
			)`,
		],
	},
];
