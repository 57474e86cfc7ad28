/**
 * The commands on a fragment of a dump (issue 21 §2): `kp list` marks the service port
 * (incomplete) with a footnote, `kp explain` answers "Unknown" for what the fragment lacks (its
 * focused read included), `--json` carries `incomplete`, and a saved state keeps it.
 */
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {runKpInProcess} from '../helpers/run-in-process.js'
import {ROOT} from '../helpers/run-cli.js'

const SVL = 'KUBE-SVL-ZROLNW67U6B7G27Z'
const tmp = mkdtempSync(join(tmpdir(), 'kp-fragment-'))
/** `iptables-save | grep -- '-A KUBE' | grep -v '^-A KUBE-SVL'` of the handmade CNI node. */
const FRAGMENT = join(tmp, 'grep.rules')
writeFileSync(
  FRAGMENT,
  readFileSync(join(ROOT, 'fixtures/iptables/handmade-node-with-cni/input.rules'), 'utf8')
    .split('\n')
    .filter((l) => l.includes('-A KUBE'))
    .map((l) => l.replace(/^\[\d+:\d+\] /, ''))
    .filter((l) => !l.startsWith('-A KUBE-SVL-'))
    .join('\n'),
)

describe('commands on a fragment', () => {
  it('kp list: (incomplete), UNKNOWN on the NodePort, and a footnote with the collect command', async () => {
    const r = await runKpInProcess(['list', '-f', FRAGMENT])
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^\(incomplete\) +NodePort \*:31000 UNKNOWN/m)
    expect(r.stdout).toContain(
      `team/api:grpc/tcp: ${SVL} is not in the input; collect with \`iptables-save -t nat\``,
    )
    expect(r.stdout).not.toMatch(/\(0 local\)/)
  })

  it('kp explain (a focused read): "Unknown" for the NodePort, never "no (remote)"', async () => {
    const r = await runKpInProcess(['explain', 'team/api', '-f', FRAGMENT])
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toContain(
      `Unknown: ${SVL} is not in the input; collect with \`iptables-save -t nat\`.`,
    )
    expect(r.stdout).not.toContain('no (remote)')
    expect(r.stdout).not.toContain('new connections fail')
    const j = JSON.parse(
      (await runKpInProcess(['explain', 'team/api', '-f', FRAGMENT, '--json'])).stdout,
    )
    const [m] = j.matches
    expect(m.incomplete).toEqual({missing: [SVL], collect: 'iptables-save -t nat'})
    expect(m.frontends.map((f: any) => [f.type, f.incomplete?.missing ?? null])).toEqual([
      ['ClusterIP', null],
      ['NodePort', [SVL]],
    ])
  })

  it('an nft listing without a service chain: endpoints "?" in the list, not 0; "none in the input" in explain', async () => {
    const chain = 'service-LAUZTJTB-ns4/svc4/tcp/p80'
    const nft = join(tmp, 'no-service-chain.nft')
    writeFileSync(
      nft,
      readFileSync(join(ROOT, 'fixtures/nft/upstream-overall/input.nft'), 'utf8')
        .split('\n')
        .filter(
          (l) =>
            l !== `add chain ip kube-proxy ${chain}` &&
            !l.startsWith(`add rule ip kube-proxy ${chain} `),
        )
        .join('\n'),
    )
    const list = await runKpInProcess(['list', '-f', nft])
    expect(list.stdout).toMatch(/^ns4\/svc4:p80\/tcp +ClusterIP 172\.30\.0\.44:80 UNKNOWN +\? /m)
    const explain = await runKpInProcess(['explain', 'ns4/svc4', '-f', nft])
    expect(explain.stdout).toContain('Endpoints: none in the input (incomplete)')
    expect(explain.stdout).not.toContain('no endpoint is programmed')
  })

  it('kp migrate says the findings may be incomplete, naming the service port and what to collect', async () => {
    const r = await runKpInProcess(['migrate', '--to', 'nftables', '-f', FRAGMENT, '--json'])
    const found = JSON.parse(r.stdout).findings.find(
      (f: any) => f.id === 'MIGRATE_INPUT_INCOMPLETE',
    )
    expect(found).toMatchObject({services: ['team/api:grpc/tcp']})
    expect(found.message).toContain(SVL)
    expect(found.action).toContain('`iptables-save -t nat`')
  })

  it('a saved state keeps incomplete, and reads back the same', async () => {
    const first = await runKpInProcess(['list', '--json', '-f', FRAGMENT])
    const saved = join(tmp, 'state.json')
    writeFileSync(saved, first.stdout)
    const second = await runKpInProcess(['list', '--json', '-f', saved])
    expect(second.exitCode, second.stderr).toBe(0)
    const services = JSON.parse(second.stdout).services
    expect(services).toEqual(JSON.parse(first.stdout).services)
    expect(services[0].incomplete.missing).toEqual([SVL])
  })

  it('a saved incomplete without its collect command is an error at its path', async () => {
    const state = JSON.parse((await runKpInProcess(['list', '--json', '-f', FRAGMENT])).stdout)
    delete state.services[0].incomplete.collect
    const bad = join(tmp, 'bad.json')
    writeFileSync(bad, JSON.stringify(state, null, 2))
    const r = await runKpInProcess(['list', '-f', bad])
    expect(r.exitCode).toBe(3)
    expect(r.stderr).toContain('services[0].incomplete.collect')
  })
})
