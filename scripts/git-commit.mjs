// The commit a build is made from, for `kp --version` (src/cli/sea/identity.ts versionLine).
import {execFileSync} from 'node:child_process'

/** The short commit of `root`, `-dirty` when the work tree had changes; `unknown` outside a git checkout. */
export function commitOf(root) {
  const git = (...args) =>
    execFileSync('git', args, {cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore']})
  try {
    const head = git('rev-parse', '--short', 'HEAD').trim()
    return git('status', '--porcelain', '--untracked-files=no').trim() ? `${head}-dirty` : head
  } catch {
    return 'unknown'
  }
}
