import type { LineageRoot, MemoryView } from '../../../server/src/protocol/protocol';
import { markdownLines, markdownText } from '../common/markdownText';
import { memoriesText, oneLine } from './lineageText';

/*
 * What the Memory view says of a root's memory file and of each memory (glossary: Project memory).
 * Titles and texts come from the repository (anyone with a commit can write them) and from agents:
 * rows are made inert by the tree, tooltips escape everything. No VS Code import: tested in plain Node.
 */

export type MemoryEntry = MemoryView['memories'][number];
type Memory = MemoryEntry['memory'];

/** The file of a root's memory, relative to the repository. */
export function memoryFilePath(root: string): string {
	return `.desk-memory/${root}.json`;
}

/** A root's row: "`.desk-memory/main.json` · 14 memories · uncommitted", or why there is nothing to show. */
export function memoryRootDescription(root: LineageRoot): string {
	if (root.memory.corrupt) {
		return `${memoryFilePath(root.name)} · damaged, kept aside`;
	}
	if (!root.memory.exists) {
		return 'no memory yet';
	}
	return [memoryFilePath(root.name), memoriesText(root.memory.memories), root.memory.uncommitted ? 'uncommitted' : '']
		.filter(Boolean)
		.join(' · ');
}

/** A root's tooltip in the Memory view. */
export function memoryRootTooltip(root: LineageRoot): string {
	const state = root.memory.corrupt
		? `The file could not be read and was kept aside as ${markdownText(root.memory.corrupt)}; nothing was replaced. Look at it, then remember again.`
		: !root.memory.exists
			? 'No memory yet. *Remember…* writes the first one; branches of this root start with its index.'
			: `${memoriesText(root.memory.memories)}${root.memory.uncommitted ? ' · the file differs from HEAD: *Commit Memory* commits it alone (trailer `Desk-Memory`)' : ' · committed'}`;
	return `**Memory of ${markdownText(root.name)}** · ${markdownText(memoryFilePath(root.name))}\n\n${state}`;
}

/** Who made a memory, as the row says it: "you" for the person, else the actor. */
export function memoryAuthor(memory: Memory): string {
	if (memory.source.kind === 'landing') {
		return `from landing${memory.source.commit ? ` ${memory.source.commit.slice(0, 7)}` : ''} (run ${memory.source.run.slice(0, 8)}…)`;
	}
	if (memory.created_by.kind === 'human') {
		return 'you';
	}
	return `${memory.created_by.kind === 'agent' || memory.created_by.kind === 'mcp_client' ? 'an agent' : memory.created_by.kind}${memory.source.run ? ` (run ${memory.source.run.slice(0, 8)}…)` : ''}`;
}

/** A day as the rows say it: "2 Oct" (the year when it is not this one). */
export function shortDay(iso: string, now = new Date()): string {
	const date = new Date(iso);
	if (Number.isNaN(date.getTime())) {
		return iso.slice(0, 10);
	}
	const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
	const day = `${date.getUTCDate()} ${months[date.getUTCMonth()]}`;
	return date.getUTCFullYear() === now.getUTCFullYear() ? day : `${day} ${date.getUTCFullYear()}`;
}

/**
 * A memory's row: its title as the label; the description "⚠ evidence changed · you · 2 Oct ·
 * “first line”". Where it came from and whether it may be stale come first: the quote is what a
 * narrow side bar cuts, and the tooltip has the whole text.
 */
export function memoryDescription(entry: MemoryEntry, now = new Date()): string {
	const { memory } = entry;
	const author =
		memory.source.kind === 'landing'
			? `from landing${memory.source.commit ? ` ${memory.source.commit.slice(0, 7)}` : ''}`
			: memoryAuthor(memory);
	return [
		entry.evidence_changed.length ? '⚠ evidence changed' : '',
		author,
		shortDay(memory.updated_at || memory.created_at, now),
		`“${oneLine(memory.text, 80)}”`,
	]
		.filter(Boolean)
		.join(' · ');
}

/** A memory's tooltip: the whole text, its tags, where it came from and the evidence it cites (changed files marked). */
export function memoryTooltip(entry: MemoryEntry): string {
	const { memory } = entry;
	const changed = new Set(entry.evidence_changed);
	const source =
		memory.source.kind === 'landing'
			? `Memorized from the landing of run ${markdownText(memory.source.run)}${memory.source.commit ? ` (commit ${markdownText(memory.source.commit.slice(0, 12))})` : ''} by ${markdownText(memory.source.model)}`
			: `Remembered by ${markdownText(memoryAuthor(memory))}${memory.source.run ? ` in run ${markdownText(memory.source.run)}` : ''}`;
	const evidence = (memory.evidence ?? []).map(
		(e) => `- ${markdownText(e.path)}${changed.has(e.path) ? ' — ⚠ changed since it was remembered' : ''}`,
	);
	return [
		`**${markdownText(memory.title)}**`,
		markdownLines(memory.text, 30),
		...(memory.tags?.length ? [`Tags: ${memory.tags.map((t) => markdownText(t)).join(', ')}`] : []),
		`${source} · ${markdownText(memory.created_at.slice(0, 16).replace('T', ' '))}${memory.updated_at !== memory.created_at ? ` · updated ${markdownText(memory.updated_at.slice(0, 16).replace('T', ' '))}` : ''}`,
		...(evidence.length ? [`Evidence:\n${evidence.join('\n')}`] : []),
		...(changed.size
			? ['⚠ A file it cites changed since: it may be stale. Check it, then *Forget* it or remember it anew.']
			: []),
		`Id ${markdownText(entry.id)}`,
	].join('\n\n');
}

/** Memories newest first, as the view lists them. */
export function newestMemoriesFirst(entries: readonly MemoryEntry[]): MemoryEntry[] {
	return [...entries].sort((a, b) =>
		(b.memory.updated_at || b.memory.created_at).localeCompare(a.memory.updated_at || a.memory.created_at),
	);
}
