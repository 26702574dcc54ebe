/** Every command of `desk`, by its name (`area verb`): what `main.ts` runs. */
import type { Command } from '../context';
import { agentCommands } from './agents';
import { assetCommands } from './assets';
import { attachmentCommands } from './attachments';
import { boardCommands } from './board';
import { cardCommands } from './card';
import { catchUpCommands } from './catchUp';
import { endingCommands } from './endings';
import { lineageCommands } from './lineage';
import { mcpCommands } from './mcp';
import { memoryCommands } from './memory';
import { runCommands } from './run';
import { runViewCommands } from './runs';
import { storeCommands } from './store';

export const commands: ReadonlyMap<string, Command> = new Map([
	...assetCommands,
	...storeCommands,
	...runViewCommands,
	...runCommands,
	...endingCommands,
	...attachmentCommands,
	...cardCommands,
	...agentCommands,
	...mcpCommands,
	...lineageCommands,
	...boardCommands,
	...memoryCommands,
	...catchUpCommands,
]);
