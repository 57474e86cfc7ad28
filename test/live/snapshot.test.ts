/**
 * Live reading when IPVS is in the kernel. This machine's kernel has no IPVS (docs/architecture.md, "Tests"), so
 * the /proc and /sys files kp looks at are written here in the kernel's layout and passed as
 * the lookup root; the commands themselves are real (and ipvsadm is not installed here).
 */
import {spawnSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {collectLive} from '../../src/live/collect-live.js'
import {nftVersionOf} from '../../src/live/snapshot.js'

const tmp = mkdtempSync(join(tmpdir(), 'kp-snapshot-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

// ip_vs_info_seq_show (net/netfilter/ipvs/ip_vs_ctl.c): one virtual server with one real server.
const PROC_IP_VS = [
  'IP Virtual Server version 1.2.1 (size=4096)',
  'Prot LocalAddress:Port Scheduler Flags',
  '  -> RemoteAddress:Port Forward Weight ActiveConn InActConn',
  'TCP  0A600001:01BB rr ',
  '  -> 0A00000A:192B      Masq    1      0          0         ',
  '',
].join('\n')

function fakeRoot(name: string, opts: {kubeIpvs0: boolean}): string {
  const root = join(tmp, name) + '/'
  mkdirSync(join(root, 'proc/net'), {recursive: true})
  writeFileSync(join(root, 'proc/net/ip_vs'), PROC_IP_VS)
  if (opts.kubeIpvs0) {
    mkdirSync(join(root, 'sys/class/net/kube-ipvs0'), {recursive: true})
    writeFileSync(join(root, 'sys/class/net/kube-ipvs0/ifindex'), '7\n')
  }
  return root
}

const ipvsadmInstalled = spawnSync('ipvsadm', ['--version']).error === undefined
const canRun = process.getuid?.() === 0 && !ipvsadmInstalled
if (!canRun)
  console.log('snapshot.test: skipping: needs root, and a machine without ipvsadm installed')

describe.skipIf(!canRun)('live reading with IPVS in the kernel', () => {
  it('exits 4 naming ipvsadm when IPVS mode is found but ipvsadm is not installed', async () => {
    const err = await collectLive({
      mode: 'ipvs',
      root: fakeRoot('with-device', {kubeIpvs0: true}),
    }).catch((e: unknown) => e)
    expect(err).toMatchObject({
      exitCode: 4,
      code: 'LIVE_MISSING_PROGRAM',
      command: 'ipvsadm -Sn',
      message: 'ipvsadm is not installed (not found in PATH)',
    })
  })

  it('does not take virtual servers without kube-ipvs0 for kube-proxy (exit 3)', async () => {
    const err = await collectLive({
      mode: 'ipvs',
      root: fakeRoot('no-device', {kubeIpvs0: false}),
    }).catch((e: unknown) => e)
    expect(err).toMatchObject({exitCode: 3, code: 'LIVE_NO_KUBE_PROXY'})
    expect((err as Error).message).toContain('IPVS: 1 virtual server(s), kube-ipvs0 absent')
  })
})

describe('tool versions', () => {
  it('takes the version number from `nft --version`, as `nft -j` metainfo states it', () => {
    // nftables 1.0.6 prints "nftables v1.0.6 (Lester Gooch #5)"; its JSON metainfo says "version": "1.0.6".
    expect(nftVersionOf('nftables v1.0.6 (Lester Gooch #5)\n')).toBe('1.0.6')
    expect(nftVersionOf('nftables v0.9.8 (E.D.S.)')).toBe('0.9.8')
    expect(nftVersionOf('no version here')).toBeNull()
  })
})
