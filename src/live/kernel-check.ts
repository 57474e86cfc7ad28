/**
 * `kp migrate --check-kernel`: does this node's kernel take the nftables rules kube-proxy would
 * write? A kernel ≥ 5.13 can still lack nft_fib, numgen, nat, masq, reject or ct
 * (siderolabs/pkgs #951), and kube-proxy then fails on its first sync. kp checks each rendered
 * file with `nft --check` inside a new network namespace (`unshare --net`), which ends with the
 * process: the host's rules are never touched, and nothing is committed even there.
 */
import {mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import type {KernelCheck} from '../analyze/migrate.js'
import {runCommand} from './exec.js'

export interface RulesFile {
  name: string
  text: string
}

/** Checks each file in a namespace of its own; the first refusal is the answer. */
export async function checkKernel(files: readonly RulesFile[]): Promise<KernelCheck> {
  if (process.getuid?.() !== 0)
    return {loaded: null, reason: 'kp was not run as root, and making a network namespace needs it'}
  const dir = await mkdtemp(join(tmpdir(), 'kp-kernel-check-'))
  try {
    for (const f of files) {
      const path = join(dir, 'rules.nft')
      await writeFile(path, f.text)
      const r = await runCommand(['unshare', '--net', 'nft', '--check', '-f', path])
      if (r.failure === null) continue
      if (r.failure.code === 'LIVE_MISSING_PROGRAM' || r.failure.code === 'LIVE_NEEDS_ROOT')
        return {loaded: null, reason: r.failure.message}
      // nft names the file and line of the statement the kernel refused.
      const why = r.stderr.trim().split('\n').slice(0, 3).join(' / ') || r.failure.message
      return {loaded: false, error: `${f.name}: ${why.replaceAll(path, f.name)}`}
    }
    return {loaded: true}
  } finally {
    await rm(dir, {recursive: true, force: true})
  }
}
