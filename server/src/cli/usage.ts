/** What `desk --help` prints, and what follows every usage error. */
export const usage = `Usage: desk [--store DIR] [--json] [--verbose] COMMAND

The library folder is --store, else $DESK_STORE.
Commands that create something (asset import, snapshot, version, link and note, task attachments add,
card go, run go, run decide) take --request-id ID (8 to 128 of A-Z a-z 0-9 . _ : -): run again with the same ID,
the command answers what it did the first time and changes nothing; the same ID with other
arguments is refused (request.idReused).

Commands:
  assets list [--project NAME] [--all]            the library's assets (--all: retired ones too)
  asset import --dir PATH [--project NAME] [--main] [--allow-git-dir]
                                                  adopt a folder (a repository's top becomes a git asset;
                                                  --allow-git-dir: also when its git folder is elsewhere)
  asset import --new NAME [--skill DESCRIPTION] [--dir PATH] [--project NAME] [--main]
                                                  a new empty snapshot asset (v1 "created"); --skill: a
                                                  skill whose v1 is a SKILL.md with that description
  asset import --asset ID --project NAME [--main] add a library asset to a project
  asset show ID                                   the record, its versions and what go would read
  asset versions ID                               versions, oldest first
  asset atgo ID                                   what a run would read if go were pressed now
  asset files ID [--version N]                    the files of a version, with their kinds
  asset cat ID PATH [--version N]                 one file's bytes (a link's target, a submodule's commit)
  asset snapshot ID [--note TEXT]                 cut the next version from the working folder
  asset version ID --put REL=SRC... [--note TEXT] write files into the folder, then cut a version
  asset tags ID [TAG...]                          set the tags (none: clear them)
  asset describe ID TEXT                          set the one-line about
  asset link --name NAME --url URL [--project NAME] [--from ID]
                                                  a link asset (--from: the asset it derives from)
  asset note --name NAME --text TEXT [--project NAME]
  asset retire ID | asset unretire ID
  asset checks ID --file CHECKS.json              set the command checks
  asset mount ID N                                lay version N out read-only; prints its path
  asset diff ID A B                               files added, removed and changed from A to B
  asset sync ID                                   record a git asset's head (made_by sync)
  asset used-in ID                                launches that plugged the asset
  asset search WORDS...                           rank the library's assets for the words (BM25)
  mcp                                             serve the desk tools over MCP on stdio, for your own agent

Runs (of the repository at --repo PATH, default the current folder):
  runs list [--all]                               intents, their plans and tasks, each task's runs, tokens and cost added up
                                                  (--all: runs that never started too)
  runs show ID                                    everything a run recorded, its usage per model
  history export [--ref REF]                      write the AI objects to refs/desk/history
  history import [--ref REF]                      read them from a history ref (twice adds nothing)
  store pack                                      move small loose blobs (a library from before packs) into packs now
  store recover --library restore|empty           a library marked damaged: take the kept copy back, or start empty
  store recover restore|empty|rebuild             the project database (of --project NAME, else --repo PATH or the
                                                  current folder) marked damaged; rebuild: empty, then refs/desk/history

Launch cards (of --project NAME, else the repository at --repo PATH or the current folder):
  card show                                       the draft card
  card suggest [--ticket TEXT | --ticket-file F]  suggestions for the ticket (saved as the card's)
  card plug --asset ID --role reference|target|instructions [--nodes a,b] [--files GLOB]... [--copy FROM=TO]...
  card keep --asset ID                            keep a suggestion: plug it as the card's Keep does (a skill as
                                                  instructions, the rest as reference)
  card unplug --asset ID
  card go [--request-id ID]                       freeze every plug, record the launch, make the run

Agents (of the run settings: --settings FILE, else the defaults):
  agent check [NAME]                              whether the agent NAME (else each) can start: its program on the
                                                  PATH, its version, its sign-in; exit 2 when one cannot (no tokens spent)

Runs carried out (of --project NAME, else the repository at --repo PATH or the current folder):
  run go [PROJECT] [--settings FILE] [--agent NAME] [--isolation shared|worktree] [--request-id ID]
                                                  Go, then carry the run out here to the gate
  run status ID                                   the run, its PatchSets, evidence and decision
  run diff ID [--patchset ID]                     its PatchSet (the latest unless named) as a unified diff: a snapshot
                                                  target's target_diff, a git target's diff
  run cancel ID [--reason TEXT]                   stop the agent's process group; the run fails
  run decide ID --decision commit|retry|abandon|checkpoint|rollback [--patchset ID] [--rationale TEXT] [--settings FILE]
                                                  the gate: commit lands the change; retry runs again here;
                                                  rollback reverts a landed run's change in a run of its own
  run resume ID [--settings FILE] [--agent NAME] [--isolation shared|worktree]
                                                  Resume from Checkpoint: a new run from the kept change, here
  run carry                                       (started by a desk, not by hand) carry the run handed over on
                                                  stdin to its gate: a run's own process, which outlives its window
  task cancel ID [--reason TEXT]                  cancel its working run, abandon its undecided ones; the task ends cancelled
  intent cancel ID [--reason TEXT]                cancel each task of it that can still run; the intent ends cancelled
  intent follow-up ID (--ticket TEXT | --ticket-file F) [--settings FILE] [--agent NAME] [--request-id ID]
                                                  a refinement of a finished intent (ID: it or one of its runs); carried out here

Lineage (of --project NAME, else the repository at --repo PATH or the current folder):
  lineage roots                                   the listed roots (main always), their tallies, branches and memory
  lineage add-root NAME [--about TEXT]            list another root branches may fork
  lineage prompt --root NAME (--prompt TEXT | --prompt-file F) [--settings FILE] [--request-id ID]
                                                  a branch of the root by your direct request; carried out here
  lineage branch --from-run RUN --repo-path ABS (--prompt TEXT | --prompt-file F) [--root NAME] [--settings FILE]
                                                  a branch of a run (Branch from Here); carried out here
  lineage tree                                    roots, tallies and branches nested under their starters
  lineage catch-up RUN                            what a branch run's next input is told of its root (no walk if unchanged)

Project memory, .desk-memory/ROOT.json (of --project NAME, else the repository at --repo PATH or the current folder):
  memory show ROOT                                its memories, newest first; uncommitted; evidence changed
  memory remember ROOT TEXT [--title T] [--request-id ID]
                                                  add a memory (text ≤ 1000, title ≤ 80)
  memory forget ROOT ID [--request-id ID]         remove one
  memory commit ROOT                              commit the file alone (trailer Desk-Memory: ROOT, hooks off)
  memory memorize RUN [--settings FILE]           a landed branch run into its root's memory (lineage.summaryAgent)

Boards of the lineage (a branch reports to its starter once, when its work ends):
  board list NODE [--since SEQ]                   a task's board: reports, notes, answers, abstracts, landings
  board post RUN TEXT [--kind note|abstract]      a passive note from a branch's run to its starter
  board answer REPORT TEXT                        answer a branch's report, once
  board continue RUN [--settings FILE] [--agent NAME] [--isolation shared|worktree]
                                                  a new run of RUN's task carrying the reports, carried out here

Attachments of a task (of --project NAME, else the repository at --repo PATH or the current folder):
  task attachments list [TASK]                    tasks with attachments, or one task's files
  task attachments add TASK FILE [--name NAME] [--note TEXT]
                                                  attach a file by hand (32 MiB a file, 100 files and 128 MiB a task)
  task attachments show TASK REF                  the record (REF: id, id prefix of 6+, or exact name)
  task attachments cat TASK REF                   the stored bytes, checked against the recorded digest
  task attachments rm TASK REF                    delete it (audited)
  (--settings FILE: JSON with the desk.agents, desk.runs and desk.checks settings as
   {"agents": [...], "agent": NAME, "isolation": ..., "checks": [...], "maxAttempts": N, "maxFrames": N, "sandbox": "auto"|"off",
    "lineage": {"branch": {...}, "limits": {...}, "summaryAgent": NAME, "memorizeOnLanding": BOOL}})
`;
