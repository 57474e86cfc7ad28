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

  it('exits 3 with path:line for malformed YAML on stdin', async () => {
    const r = await runKpInProcess(['list', '--json', '-f', '-'], {
      input: 'apiVersion: v1\nkind: Service\nmetadata:\n\tname: a\n',
    })
    expect(r.exitCode).toBe(3)
    expect(r.stderr).toMatch(/^kp: -:4: malformed YAML/m)
    expect(JSON.parse(r.stdout).error.code).toBe('KUBE_BAD_YAML')
  })
})
