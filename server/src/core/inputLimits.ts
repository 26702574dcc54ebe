/**
 * Caps on input the desk takes from people and scripts, one place for both doors: the JSON-RPC
 * schemas of the server and the files the command line reads (`--ticket-file`, `--settings`,
 * `--file`, `--put`). The same input is refused the same way whichever door it comes through.
 */

/** A launch card's ticket (ranks at most this much text; glossary: Suggestion). */
export const maxTicketBytes = 256 * 1024;
/** The text of a notes asset. */
export const maxNoteTextBytes = 256 * 1024;
/** A run settings file (`desk.agents`, `desk.runs`, `desk.checks`). */
export const maxSettingsBytes = 256 * 1024;
/** A checks file, and any other JSON param without a cap of its own. */
export const maxJsonBytes = 64 * 1024;
/** One file written into a snapshot asset: the blob store's limit of a blob. */
export const maxBlobBytes = 2 * 1024 * 1024 * 1024;
/** One line an agent prints (a stream-json event); a longer one is dropped and reported. */
export const maxAgentLineBytes = 32 * 1024 * 1024;
