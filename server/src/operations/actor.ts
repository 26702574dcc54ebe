/**
 * Who makes a call (glossary: Actor). Every operation runs for an actor, and what it makes records
 * that actor: an asset's `created_by`, a version's `made_by`, an attachment's `added_by`, a
 * Decision's actor. Never a fixed name: the person is who their git identity (else their account)
 * says, an agent is its run.
 */
import type { ActorRef } from '../ai/types';
import type { MadeBy } from '../assets/types';

/** Where a call came from: the editor, the `desk` command line (or `desk mcp`), or an agent inside a run. */
export type CallerKind = 'editor' | 'cli' | 'agent';

/** A person: their git identity (`user.name`, `user.email`) when configured, else their account name. */
export interface PersonIdentity {
	readonly name: string;
	readonly email?: string;
}

export type Actor =
	/** The person, acting in the editor. */
	| { readonly kind: 'editor'; readonly person: PersonIdentity }
	/** The person (or their script, or their own agent through `desk mcp`) at the command line. */
	| {
			readonly kind: 'cli';
			readonly person: PersonIdentity;
			readonly via?: 'mcp';
			/** The folder a relative path is read against: where the command (or `desk mcp`, by the person's agent) was started. */
			readonly cwd?: string;
	  }
	/** An agent inside a run: everything it may touch is bound to that run's project, task and folders. */
	| {
			readonly kind: 'agent';
			readonly agent: string;
			readonly project: string;
			readonly task: string;
			readonly run: string;
			/** The run's work folder and outbox, as the desk sees them: the only folders its paths may name. */
			readonly workFolder: string;
			readonly outbox: string;
			/**
			 * Folders inside the work folder the sandbox shows read-only (in the person's own checkout:
			 * `.git`, `.vscode`, `.claude`, `.agents`) and hidden (`.desk`, where the outbox lives): the
			 * desk tools write into neither for the agent, nor read a hidden one (the outbox excepted).
			 */
			readonly readOnlyInside?: readonly string[];
			readonly hiddenInside?: readonly string[];
			/** The values of the agent's secret environment: scrubbed from what it attaches, as from its outbox. */
			readonly secrets?: readonly string[];
	  };

/** `Name <email>`, or the name alone. */
export function personLabel(person: PersonIdentity): string {
	return person.email ? `${person.name} <${person.email}>` : person.name;
}

/** How the actor is written on what it makes (`created_by`, `added_by`): `Jane Doe <jane@example.com>`, `agent claude, run <id>`. */
export function actorLabel(actor: Actor): string {
	switch (actor.kind) {
		case 'editor':
			return personLabel(actor.person);
		case 'cli':
			return `${personLabel(actor.person)} (${actor.via === 'mcp' ? 'desk mcp' : 'desk'})`;
		case 'agent':
			return `agent ${actor.agent}, run ${actor.run}`;
	}
}

/**
 * A version's `made_by` (glossary: made_by): a press in the window is `user`; a desk tool call,
 * by an agent or at the command line, is `conductor`.
 */
export function madeByOf(actor: Actor): Extract<MadeBy, 'user' | 'conductor'> {
	return actor.kind === 'editor' ? 'user' : 'conductor';
}

/**
 * Whether what the actor writes is a model's words, an about marked `about_model_written` (glossary:
 * Tags and about): an agent inside a run, or the person's own agent calling the desk tools through
 * `desk mcp`. The person's own words come from the editor and from `desk` itself.
 */
export function writesForModel(actor: Actor): boolean {
	return actor.kind === 'agent' || (actor.kind === 'cli' && actor.via === 'mcp');
}

/** The actor as the AI object model records it (a Decision's `created_by`, say). */
export function actorRefOf(actor: Actor): ActorRef {
	switch (actor.kind) {
		case 'editor':
		case 'cli':
			return { kind: 'human', id: personLabel(actor.person) };
		case 'agent':
			return { kind: 'mcp_client', id: `run:${actor.run}` };
	}
}
