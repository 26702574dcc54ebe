import { titleFrom } from '../ai/model';

/**
 * The Task a ticket describes (glossary: AI objects): its first line is the title, a section headed
 * "Acceptance criteria" (or "Done when") lists what must hold when it is done, a section headed
 * "Constraints" the rules the solution must keep, one item a list line (or a line, without a list);
 * the rest of the ticket after the first line is the description. The ticket itself stays the
 * Intent's prompt, whole.
 */
export interface TicketFields {
	title: string;
	description?: string;
	constraints: string[];
	acceptanceCriteria: string[];
}

const sectionKinds: Array<{ field: 'constraints' | 'acceptanceCriteria'; heading: RegExp }> = [
	{ field: 'acceptanceCriteria', heading: /^(acceptance criteria|acceptance|done when)$/i },
	{ field: 'constraints', heading: /^(constraints|constraint)$/i },
];

/** A heading line: `## Name`, `Name:` alone on its line, or `**Name**`. */
function headingOf(line: string): string | undefined {
	const trimmed = line.trim();
	const match =
		/^#{1,6}\s+(.+?)\s*#*$/.exec(trimmed) ??
		/^\*\*(.+?)\*\*:?$/.exec(trimmed) ??
		/^([A-Za-z][A-Za-z ]{2,40}):$/.exec(trimmed);
	return match?.[1]?.replace(/:$/, '').trim();
}

export function ticketFields(ticket: string): TicketFields {
	const lines = ticket.trim().split(/\r?\n/);
	const title = titleFrom(lines[0] ?? '', 'Launch');
	const fields: TicketFields = { title, constraints: [], acceptanceCriteria: [] };
	const description: string[] = [];
	let into: 'constraints' | 'acceptanceCriteria' | undefined;
	for (const line of lines.slice(1)) {
		const heading = headingOf(line);
		if (heading !== undefined) {
			into = sectionKinds.find((k) => k.heading.test(heading))?.field;
			if (into) {
				continue;
			}
		}
		if (!into) {
			description.push(line);
			continue;
		}
		const item = line.replace(/^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?/, '').trim();
		if (item !== '') {
			fields[into].push(item);
		}
	}
	const text = description.join('\n').trim();
	if (text !== '') {
		fields.description = text;
	}
	return fields;
}
