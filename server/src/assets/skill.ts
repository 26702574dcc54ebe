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
	if (value.length >= 2 && value.startsWith("'") && value.endsWith("'")) {
		// YAML's single-quoted scalar: a quote inside is written twice.
		return value.slice(1, -1).replace(/''/g, "'");
	}
	if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
		return value.slice(1, -1).replace(/\\(["\\])/g, '$1');
	}
	return value;
}

/** The names Claude Code accepts for a skill: lowercase letters, digits and hyphens, at most 64. */
const skillName = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** Why `name` and `description` cannot make a skill, or undefined when they can. */
export function skillFileProblem(name: string, description: string): string | undefined {
	const about = description.trim();
	if (!skillName.test(name) || name.length > 64) {
		return `A skill's name is lowercase letters, digits and hyphens, at most 64 (${JSON.stringify(name)} is not).`;
	}
	if (about === '' || about.length > 1024 || /[\r\n]/.test(about)) {
		return 'A skill needs a description of one line, at most 1,024 characters.';
	}
	return undefined;
}

/**
 * The SKILL.md of a new skill: front matter with its name and description (what it does and when
 * to use it, which is what agents and the launch card match on), and a body for the person to
 * write. `name` and `description` are ones {@link skillFileProblem} accepts.
 */
export function newSkillFile(name: string, description: string): string {
	const about = description.trim();
	// Plain when YAML reads it back as written; else single-quoted, a quote inside written twice.
	const plain = /^[^\s'"[\]{}>|*&!%@`#,?:-](?:(?!: | #)[^\t])*$/.test(about) && !/[:\s]$/.test(about);
	const value = plain ? about : `'${about.replace(/'/g, "''")}'`;
	return `---\nname: ${name}\ndescription: ${value}\n---\n\n# ${name}\n\nWhat the agent should do, step by step, when this skill applies.\n`;
}
