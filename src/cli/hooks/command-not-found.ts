/**
 * oclif's command_not_found hook: `kp nosuch` is a usage error (exit 2) with the closest
 * commands, in kp's error shape, instead of oclif's "command nosuch not found" stack.
 */
import type {Hook} from '@oclif/core/hooks'
import {printKpError} from '../print-error.js'
import {unknownCommandError} from '../usage-error.js'

const hook: Hook<'command_not_found'> = async function (opts) {
  const known = opts.config.commands.filter((c) => !c.hidden).map((c) => c.id)
  // With topicSeparator ' ', oclif joins the words it could not place into the id (`nosuch:x`);
  // kp has no topics, so the first word is the command.
  const err = unknownCommandError(opts.id.split(':')[0] ?? opts.id, known)
  printKpError(err, (opts.argv ?? []).includes('--json'))
  this.exit(err.exitCode)
}

export default hook
