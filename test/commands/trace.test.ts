/**
 * `kp trace` through oclif: the text and JSON answers on kube-proxy's own overall dump, and its
 * errors (a mode it does not walk, an ambiguous destination, a bad --from) with their exit codes.
 */
import {spawnSync} from 'node:child_process'
import {describe, expect, it} from 'vitest'
import {runKpInProcess} from '../helpers/run-in-process.js'

/** Graphviz, to check that -o dot is a graph it draws (CI installs it). */
const hasDot = spawnSync('dot', ['-V']).status === 0
if (!hasDot) {
  if (process.env.CI === 'true') throw new Error('dot (graphviz) is not installed; CI needs it')
  console.log('skipping the dot -Tsvg check: dot (graphviz) is not installed')
}

const RULES = 'fixtures/iptables/upstream-overall/input.rules'

describe('kp trace', () => {
  it('prints each branch with its chance, DNAT target and the rules it took', async () => {
    const r = await runKpInProcess(['trace', '172.30.0.44:80', '-f', RULES, '--no-color'])
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toContain('TCP from a pod to 172.30.0.44:80  (iptables mode)')
    expect(r.stdout).toMatch(/ 50 % {2}forwarded to 10\.180\.0\.4:80 \(DNAT\), source kept/)
    expect(r.stdout).toMatch(/ 50 % {2}forwarded to 10\.180\.0\.5:80 \(DNAT\), source kept/)
    expect(r.stdout).toContain(
      `${RULES}:84  nat KUBE-SVC-4SW47YFZTEDKD3PK: jump to KUBE-SEP-UKSFD7AGPMPPLUHC`,
    )
  })

  it('a service name traces its ClusterIP; --from external is masqueraded there', async () => {
    const r = await runKpInProcess([
      'trace',
      'ns5/svc5',
      '--from',
      'external',
      '-f',
      RULES,
      '--json',
    ])
    expect(r.exitCode, r.stderr).toBe(0)
    const t = JSON.parse(r.stdout)
    expect(t).toMatchObject({kind: 'Trace', mode: 'iptables', unsupported: null})
    expect(t.packet).toEqual({
      from: 'external',
      source: null,
      destination: '172.30.0.45',
      port: 80,
      protocol: 'TCP',
    })
    expect(t.outcomes).toEqual([
      expect.objectContaining({
        verdict: 'forwarded',
        dnat: '10.180.0.3:80',
        masquerade: true,
        probability: 1,
      }),
    ])
  })

  it('a client outside loadBalancerSourceRanges is dropped, with the reason in words', async () => {
    const r = await runKpInProcess([
      'trace',
      '5.6.7.8:80',
      '--from',
      '198.51.100.7',
      '-f',
      RULES,
      '--no-color',
    ])
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toContain(
      "100 %  dropped: source 198.51.100.7 is outside the service's loadBalancerSourceRanges",
    )
    expect(r.stdout).toContain(`${RULES}:17  filter KUBE-PROXY-FIREWALL: dropped`)
  })

  it('a service with no endpoints is rejected', async () => {
    const r = await runKpInProcess(['trace', '172.30.0.46:80', '-f', RULES, '--json'])
    expect(JSON.parse(r.stdout).outcomes).toEqual([
      expect.objectContaining({
        verdict: 'rejected',
        reason: 'the service has no endpoints, so kube-proxy rejects new connections',
      }),
    ])
  })

  it('IPVS input: the virtual server and the real server its scheduler picks', async () => {
    const r = await runKpInProcess([
      'trace',
      '10.96.0.10:53/udp',
      '-f',
      'fixtures/ipvs/generated/ipvsadm-Ln.txt',
      '--no-color',
    ])
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toContain('UDP from a pod to 10.96.0.10:53  (ipvs mode)')
    expect(r.stdout).toMatch(/ 50 % {2}forwarded to 10\.244\.2\.4:53 \(DNAT\)/)
    expect(r.stdout).toContain(
      'fixtures/ipvs/generated/ipvsadm-Ln.txt:31  ipvs UDP 10.96.0.10:53: virtual server, scheduler rr',
    )
  })

  it('cluster objects alone have no rules to walk: exit 3 with the reason', async () => {
    const r = await runKpInProcess([
      'trace',
      '10.96.0.10:53/udp',
      '-f',
      'fixtures/ipvs/generated/cluster.kubectl-get-svc-endpointslices-A-o-yaml.yaml',
    ])
    expect(r.exitCode, r.stderr).toBe(3)
    expect(r.stderr).toContain('cannot trace: kp trace walks iptables, nftables and IPVS rules')
  })

  it('nftables input is walked too', async () => {
    const r = await runKpInProcess([
      'trace',
      '172.30.0.44:80',
      '-f',
      'fixtures/nft/upstream-overall/input.nft',
      '--no-color',
    ])
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/ 50 % {2}forwarded to 10\.180\.0\.4:80 \(DNAT\), source kept/)
    expect(r.stdout).toContain('ip kube-proxy services: goto service-LAUZTJTB-ns4/svc4/tcp/p80')
  })

  it('usage errors exit 2: a bad --from, and a service that is not one frontend', async () => {
    const bad = await runKpInProcess(['trace', '172.30.0.44:80', '--from', 'mars', '-f', RULES])
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr).toContain('--from "mars" is neither a kind of client nor an IP address')
    const noPort = await runKpInProcess(['trace', '172.30.0.44', '-f', RULES])
    expect(noPort.exitCode, noPort.stderr).toBe(0)
    const unknown = await runKpInProcess(['trace', 'ns9/nope', '-f', RULES])
    expect(unknown.exitCode).toBe(3)
  })

  it.runIf(hasDot)(
    '-o dot is a graph Graphviz draws: a node per rule, edges with the chance',
    async () => {
      const r = await runKpInProcess(['trace', '172.30.0.44:80', '-o', 'dot', '-f', RULES])
      expect(r.exitCode, r.stderr).toBe(0)
      expect(r.stdout).toMatch(/^digraph trace \{/)
      // Two endpoints of 50 %: the split shows on the edges out of the KUBE-SVC rules.
      expect(r.stdout).toMatch(/ -> n\d+ \[label="50 %"\];/)
      expect(r.stdout).toContain('nat KUBE-SVC-4SW47YFZTEDKD3PK\\n' + RULES + ':84')
      const svg = spawnSync('dot', ['-Tsvg'], {input: r.stdout, encoding: 'utf8'})
      expect(svg.status, svg.stderr).toBe(0)
      expect(svg.stderr).toBe('')
      expect(svg.stdout).toContain('<svg')
      expect(svg.stdout).toContain('forwarded to 10.180.0.5:80')
    },
  )

  it('-o dot: each set of conditions is a box of its own, drawn by Graphviz', async () => {
    const r = await runKpInProcess([
      'trace',
      '5.6.7.8:80',
      '--from',
      'external',
      '-o',
      'dot',
      '-f',
      RULES,
    ])
    expect(r.exitCode, r.stderr).toBe(0)
    if (hasDot) {
      const svg = spawnSync('dot', ['-Tsvg'], {input: r.stdout, encoding: 'utf8'})
      expect(svg.status, svg.stderr).toBe(0)
    }
    // Inside or outside loadBalancerSourceRanges: two boxes, each titled with its condition.
    expect(r.stdout).toContain('subgraph cluster_1 {')
    expect(r.stdout).toContain(`label="If the client's address is not in 203.0.113.0/25";`)
  })

  it('-o mermaid is a flowchart: quoted labels, chances on the edges', async () => {
    const r = await runKpInProcess(['trace', '172.30.0.44:80', '-o', 'mermaid', '-f', RULES])
    expect(r.exitCode, r.stderr).toBe(0)
    const lines = r.stdout.trimEnd().split('\n')
    expect(lines[0]).toBe('flowchart TD')
    for (const line of lines.slice(1))
      expect(line).toMatch(/^ {2}(n\d+(\["[^"]*"\]|\("[^"]*"\))|n\d+ -->(\|"[^"]*"\|)? n\d+)$/)
    expect(r.stdout).toMatch(/ -->\|"50 %"\| n\d+/)
  })
})
