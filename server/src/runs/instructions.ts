/**
 * How an agent receives a run's instructions plugs (glossary: Plug), its `skills` setting: installed
 * as Claude Code skills in its folder, inlined in its prompt, or not given at all. Without imports:
 * the launch card and the run page say it in the same words.
 */
export const skillsDeliveries = ['claude', 'inline', 'none'] as const;

export type SkillsDelivery = (typeof skillsDeliveries)[number];

/** Claude Code finds skills in its folder by itself; any other agent reads them in its prompt. */
export function defaultSkillsDelivery(format: string): SkillsDelivery {
	return format === 'claude-stream-json' ? 'claude' : 'inline';
}

/** How this agent receives instructions, in the words the card and the run page show. */
export const instructionsWords: Readonly<Record<SkillsDelivery, string>> = {
	claude: 'installed as Claude Code skills',
	inline: 'inlined in the prompt',
	none: 'not given',
};
