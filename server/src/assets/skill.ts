/**
 * SKILL.md (glossary: Kind): a skill is a folder whose SKILL.md starts with YAML front matter naming the skill
 * and describing it. Only the two fields are read, as plain `key: value` lines, which is what such
 * files hold; a file without both is not a valid skill.
 */
export function parseSkillFile(text: string): { name: string; description: string } | undefined {
	const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
	if (!match) {
		return undefined;
	}
	const fields = new Map<string, string>();
	for (const line of match[1]!.split(/\r?\n/)) {
		const field = /^([A-Za-z_][\w-]*):\s*(.*)$/.exec(line);
		if (field) {
			fields.set(field[1]!.toLowerCase(), unquote(field[2]!.trim()));
		}
	}
	const name = fields.get('name');
	const description = fields.get('description');
	return name && description ? { name, description } : undefined;
}

function unquote(value: string): string {
	if (
		value.length >= 2 &&
		((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'")))
	) {
		return value.slice(1, -1);
	}
	return value;
}
