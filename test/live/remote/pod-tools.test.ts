/**
 * IPVS mode read with the kube-proxy image's tools: no ipvsadm (kp reads /proc/net/ip_vs) and no
 * ip (kube-ipvs0's addresses are not read, with a warning). This machine's kernel has no IPVS,
 * so, as in test/live/snapshot.test.ts, the /proc and /sys files are written here in the
 * kernel's layout (a stand-in for an IPVS kernel), and the pod's missing programs are answered
 * as missing; the other commands are real.
 */
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {collectLive} from '../../../src/live/collect-live.js'
import {localRunner} from '../../../src/live/probe.js'
import {readState} from '../../../src/readers/read-state.js'

const tmp = mkdtempSync(join(tmpdir(), 'kp-pod-tools-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

// ip_vs_info_seq_show (net/netfilter/ipvs/ip_vs_ctl.c): 10.96.0.1:443 rr → 10.0.0.10:6443.
const PROC_IP_VS = [
  'IP Virtual Server version 1.2.1 (size=4096)',
  'Prot LocalAddress:Port Scheduler Flags',
  '  -> RemoteAddress:Port Forward Weight ActiveConn InActConn',
  'TCP  0A600001:01BB rr ',
  '  -> 0A00000A:192B      Masq    1      0          0         ',
  '',
].join('\n')

const canRun = process.getuid?.() === 0
if (!canRun) console.log('pod-tools.test: skipping: the iptables and nft probes need root')

describe.skipIf(!canRun)('IPVS mode through the kube-proxy image', () => {
  it('reads /proc/net/ip_vs where ipvsadm is missing, and goes on without ip', async () => {
    const root = join(tmp, 'node') + '/'
    mkdirSync(join(root, 'proc/net'), {recursive: true})
    writeFileSync(join(root, 'proc/net/ip_vs'), PROC_IP_VS)
    mkdirSync(join(root, 'sys/class/net/kube-ipvs0'), {recursive: true})
    writeFileSync(join(root, 'sys/class/net/kube-ipvs0/ifindex'), '7\n')
    const local = localRunner(root)
    const runner = {
      ...local,
      podTools: true,
      run: async (argv: readonly string[], opts: object) => {
        const r = await local.run(argv, opts)
        if (argv[0] !== 'ipvsadm' && argv[0] !== 'ip') return r
        return {
          ...r,
          exitCode: 127,
          failure: {code: 'LIVE_MISSING_PROGRAM' as const, message: `${argv[0]} is not in the pod`},
        }
      },
    }
    const live = await collectLive({mode: 'ipvs', runner})
    expect(live.sources.map((s) => [s.path, s.format])).toContainEqual([
      'live:cat /proc/net/ip_vs',
      'ipvsadm',
    ])
    expect(live.warnings).toContain("ip is not in the pod: kube-ipvs0's addresses are not read")
    const state = await readState({sources: live.sources, facts: live.facts}, {mode: 'ipvs'})
    expect(state.mode).toBe('ipvs')
    const fe = state.services.flatMap((s) => s.frontends)
    expect(fe.map((f) => `${f.ip}:${f.port}`)).toContain('10.96.0.1:443')
  })
})
