/**
 * Every kp command by id, for the single executable: oclif finds commands by listing
 * dist/commands on disk, and a single executable has no files (docs/sea.md). A test checks this
 * map against src/commands, so a new command cannot be left out of it.
 */
import Collect from '../../commands/collect.js'
import Completion from '../../commands/completion.js'
import Diff from '../../commands/diff.js'
import Explain from '../../commands/explain.js'
import List from '../../commands/list.js'
import Migrate from '../../commands/migrate.js'
import Probe from '../../commands/probe.js'
import Trace from '../../commands/trace.js'
import Verify from '../../commands/verify.js'

export const SEA_COMMANDS = {
  collect: Collect,
  completion: Completion,
  diff: Diff,
  explain: Explain,
  list: List,
  migrate: Migrate,
  probe: Probe,
  trace: Trace,
  verify: Verify,
}
