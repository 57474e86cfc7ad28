/**
 * The cluster-objects reader through the real CLI: `kp list --json` on the generated scenario,
 * and exit code 3 with `path:line` for malformed YAML (src/errors.ts EXIT).
 */
import {describe, expect, it} from 'vitest'
import type {ProxyState} from '../../../src/model/types.js'
import {runKpInProcess} from '../../helpers/run-in-process.js'

const FIXTURE = 'fixtures/kube/ipvs-generated/cluster.kubectl-get-svc-endpointslices-A-o-yaml.yaml'

describe('kp list on cluster objects', () => {
  it('prints the cluster state for --node and --mode', async () => {
    const r = await runKpInProcess([
      'list',
      '--json',
      '-f',
      FIXTURE,
      '--node',
      'node-c',
      '--mode',
      'iptables',
    ])
    expect(r.exitCode).toBe(0)
    const state = JSON.parse(r.stdout) as ProxyState
    expect(state.mode).toBe('cluster')
    expect(state.node.name).toBe('node-c')
    // default/lb is ETP=Local and node-c runs none of its endpoints: iptables drops external traffic.
    const lb = state.services.find((s) => s.name === 'lb')
    expect(lb?.frontends.map((f) => `${f.type} ${f.action}`)).toEqual([
      'ClusterIP forward',
      'LoadBalancer drop',
      'NodePort drop',
    ])
    // The headless and ExternalName Services are info diagnostics, hidden without --verbose.
    expect(r.stderr).toMatch(/info diagnostic\(s\) hidden/)
  })

  it('without --node on a host that is no node of the objects: the cluster-wide view, named as such', async () => {
    const list = await runKpInProcess(['list', '-f', FIXTURE])
    expect(list.exitCode).toBe(0)
    // default/lb is ETP=Local with endpoints on node-a and node-b: forwarded there, dropped elsewhere.
    expect(list.stdout).toMatch(/LB 10\.0\.100\.10:443 .*\(on node-a, node-b; DROP elsewhere\)/)
    expect(list.stdout).toMatch(/NodePort \*:31443 \(on node-a, node-b; DROP elsewhere\)/)
    expect(list.stdout).toMatch(/service ports \(cluster mode, cluster-wide\)\nCluster-wide view: /)

    const explained = await runKpInProcess(['explain', 'default/lb', '-f', FIXTURE])
    expect(explained.exitCode).toBe(0)
    expect(explained.stdout).toContain('default/lb:https/tcp  (cluster mode, cluster-wide)')
    expect(explained.stdout).toContain(
      'Forwarded (DNAT) on the nodes running an endpoint (node-a, node-b) to the endpoints on that node (externalTrafficPolicy=Local); dropped on every other node.',
    )
    const json = await runKpInProcess(['explain', 'default/lb', '--json', '-f', FIXTURE])
    const result = JSON.parse(json.stdout)
    expect(result).toMatchObject({pointOfView: 'cluster-wide', node: null})
    expect(
      result.matches[0].frontends.map((f: any) => [f.type, f.action, f.forwardedOnNodes]),
    ).toEqual([
      ['ClusterIP', 'forward', undefined],
      ['LoadBalancer', 'forward', ['node-a', 'node-b']],
      ['NodePort', 'forward', ['node-a', 'node-b']],
    ])

    // IPVS falls back to every endpoint where none runs locally: no node drops.
    const ipvs = await runKpInProcess(['explain', 'default/lb', '-f', FIXTURE, '--mode', 'ipvs'])
    expect(ipvs.stdout).toMatch(
      /NodePort \*:31443\n +Forwarded \(DNAT\) on every node: to the endpoints on that node where it runs one \(externalTrafficPolicy=Local\), elsewhere to any of the 2 endpoints/,
    )

    // With --node, that node's view, named in the heading.
    const onC = await runKpInProcess(['explain', 'default/lb', '-f', FIXTURE, '--node', 'node-c'])
    expect(onC.stdout).toContain('default/lb:https/tcp  (cluster mode, node node-c)')
    expect(onC.stdout).not.toContain('(on node-a')
    const listC = await runKpInProcess(['list', '-f', FIXTURE, '--node', 'node-c'])
    expect(listC.stdout).toMatch(/service ports \(cluster mode, node node-c\)$/m)
  })

  it('exits 3 with path:line for malformed YAML on stdin', async () => {
    const r = await runKpInProcess(['list', '--json', '-f', '-'], {
      input: 'apiVersion: v1\nkind: Service\nmetadata:\n\tname: a\n',
    })
    expect(r.exitCode).toBe(3)
    expect(r.stderr).toMatch(/^kp: -:4: malformed YAML/m)
    expect(JSON.parse(r.stdout).error.code).toBe('KUBE_BAD_YAML')
  })
})
