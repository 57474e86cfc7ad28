/**
 * An nftables-mode node whose nft program is missing (issue 21, section 5): kp must say it cannot
 * read the node (exit 4, naming nft), not "no kube-proxy here" (exit 3), and `kp collect` must not
 * write an empty bundle and exit 0. The node is a network namespace with a kube-proxy table; nft is
 * hidden by a private mount of /usr/sbin that holds only the iptables-nft tools.
 */
import {copyFileSync, mkdtempSync, rmSync, symlinkSync, existsSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {Netns, kernelUnavailable, runKpAsync, skipEachWhen} from './netns.js'

const MULTI = '/usr/sbin/xtables-nft-multi'
let skipReason = kernelUnavailable('missing-nft.test', ['ip', 'nft', 'unshare', 'mount'])
if (skipReason === null && !existsSync(MULTI)) {
  skipReason = `${MULTI} not found: the iptables-nft tools cannot be kept while nft is hidden`
  process.stderr.write(`missing-nft.test: kernel tests skipped: ${skipReason}\n`)
}

const tmp = mkdtempSync(join(tmpdir(), 'kp-missing-nft-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

/** A /usr/sbin stand-in with iptables-nft-save and ip6tables-nft-save, and no nft. */
function sbinWithoutNft(): string {
  const made = mkdtempSync(join(tmp, 'sbin-'))
  copyFileSync(MULTI, join(made, 'xtables-nft-multi'))
  for (const name of ['iptables-nft-save', 'ip6tables-nft-save', 'iptables'])
    symlinkSync('xtables-nft-multi', join(made, name))
  return made
}

/** Runs the rest of the argv with /usr/sbin replaced by `sbin`, in a mount namespace of its own. */
const withoutNft = (ns: Netns, sbin: string) => [
  ...ns.prefix,
  'unshare',
  '-m',
  'sh',
  '-c',
  `mount --bind ${sbin} /usr/sbin && exec "$@"`,
  'sh',
]

describe('an nftables-mode node without nft', () => {
  skipEachWhen(skipReason)
  it('kp list exits 4 naming nft; kp collect exits 4 and writes no bundle', async () => {
    const ns = new Netns()
    try {
      ns.run(['nft', 'add', 'table', 'ip', 'kube-proxy'])
      const prefix = withoutNft(ns, sbinWithoutNft())
      const list = await runKpAsync(['list', '--json'], {prefix, timeout: 60_000})
      expect(list.exitCode).toBe(4)
      expect(JSON.parse(list.stdout).error).toMatchObject({
        code: 'LIVE_MISSING_PROGRAM',
        exitCode: 4,
      })
      expect(list.stderr).toContain('nft is not installed')

      const out = join(tmp, 'bundle')
      const collect = await runKpAsync(['collect', '--out', out], {prefix, timeout: 60_000})
      expect(collect.exitCode).toBe(4)
      expect(collect.stderr).toContain('nft is not installed')
      expect(existsSync(join(out, 'manifest.json'))).toBe(false)

      // --mode iptables asks nothing of nft: no iptables rules there is still exit 3.
      const forced = await runKpAsync(['list', '--mode', 'iptables'], {prefix, timeout: 60_000})
      expect(forced.exitCode).toBe(3)
    } finally {
      ns.delete()
    }
  })
})
