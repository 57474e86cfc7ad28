/**
 * Filing `kp verify --against` / `kp migrate --verify` differences under the migration findings
 * that announce them. Built inputs: no kernel.
 */
import {describe, expect, it} from 'vitest'
import {announces, attributeDifferences} from '../../../src/analyze/verify/attribute.js'
import type {Finding} from '../../../src/analyze/findings.js'
import type {CheckResult, VerifyResult} from '../../../src/analyze/verify/types.js'
import {renderVerify} from '../../../src/cli/views/verify.js'
import {plainStyle} from '../../../src/cli/views/style.js'
import {fe, sp, state} from '../migrate/states.js'
import {planMigration} from '../../../src/analyze/migrate.js'

function check(over: Partial<CheckResult>): CheckResult {
  return {
    client: 'external',
    frontend: '10.96.0.10:80',
    source: '198.51.100.2',
    probes: 10,
    agrees: false,
    observed: {rejected: 10},
    expected: 'forwarded to 10.180.0.1:80',
    differences: ['rejected, expected forwarded'],
    ...over,
  }
}

function result(services: Array<{service: string; checks: CheckResult[]}>): VerifyResult {
  return {
    schemaVersion: 1,
    kind: 'VerifyResult',
    mode: 'nftables',
    loadedWith: 'nft -f',
    probes: 10,
    assumedHooks: [],
    services: services.map((s) => ({
      ...s,
      verdict: s.checks.some((c) => !c.agrees) ? 'differs' : 'agrees',
      probes: 10,
      reason: null,
    })),
    summary: {agrees: 0, differs: services.length, notVerified: 0},
    addresses: {nodeIps: [], externalIps: [], podIps: [], hairpinIps: [], podInterface: 'eth0'},
    seconds: 1,
  }
}

function finding(over: Partial<Finding>): Finding {
  return {
    id: 'MIGRATE_NODEPORT_ADDRESSES',
    severity: 'warning',
    title: 'NodePorts on non-primary node addresses stop working in nftables mode',
    message: '',
    services: [],
    addresses: [],
    evidence: [],
    action: '',
    docs: null,
    ...over,
  }
}

describe('attributeDifferences', () => {
  const web = 'default/web:http/tcp'
  const nodePorts = finding({services: [web]})

  it('files a difference under the finding that names its service and client kind', () => {
    const r = result([
      {
        service: web,
        checks: [
          check({client: 'second-node-address', frontend: '192.0.2.20:30080'}),
          check({client: 'external', agrees: true, differences: []}),
        ],
      },
    ])
    const a = attributeDifferences(r, [nodePorts])
    expect(a.unexpected).toEqual([])
    expect(a.announced).toEqual([
      {
        id: 'MIGRATE_NODEPORT_ADDRESSES',
        title: nodePorts.title,
        differences: [
          {
            service: web,
            client: 'second-node-address',
            frontend: '192.0.2.20:30080',
            source: '198.51.100.2',
            differences: ['rejected, expected forwarded'],
          },
        ],
      },
    ])
  })

  it('reports a difference no finding announces as unexpected', () => {
    // Same service, but an external client on the ClusterIP: not what the NodePort finding says.
    const r = result([{service: web, checks: [check({client: 'external'})]}])
    const a = attributeDifferences(r, [nodePorts])
    expect(a.announced).toEqual([])
    expect(a.unexpected.map((d) => d.client)).toEqual(['external'])
  })

  it('needs the service, and the addresses where the finding names them', () => {
    const d = {
      service: web,
      client: 'pod' as const,
      frontend: '10.96.0.10:80',
      source: '10.244.1.5',
      differences: ['x'],
    }
    const affinity = finding({id: 'MIGRATE_SESSION_AFFINITY_SCOPE', services: [web]})
    expect(announces(affinity, d)).toBe(true)
    expect(announces({...affinity, services: ['default/other:http/tcp']}, d)).toBe(false)
    expect(announces({...affinity, addresses: ['10.96.0.10']}, d)).toBe(true)
    expect(announces({...affinity, addresses: ['10.244.0.0/16']}, d)).toBe(true)
    expect(announces({...affinity, addresses: ['10.96.0.10:443']}, d)).toBe(false)
    expect(announces({...affinity, addresses: ['192.0.2.0/24']}, d)).toBe(false)
  })

  it('files nothing under node-wide findings that name no subject, nor under "cannot verify" ones', () => {
    const d = {
      service: web,
      client: 'external' as const,
      frontend: '10.96.0.10:80',
      source: '198.51.100.2',
      differences: ['x'],
    }
    expect(announces(finding({id: 'MIGRATE_NO_AUTOMATIC_CLEANUP'}), d)).toBe(false)
    expect(announces(finding({id: 'MIGRATE_INPUT_INCOMPLETE', services: [web]}), d)).toBe(false)
    // The health check port is not probed: a difference on the service is not that finding's.
    expect(
      announces(finding({id: 'RENDER_HEALTH_CHECK_NODEPORT_NO_RULE', services: [web]}), d),
    ).toBe(false)
    expect(
      announces(finding({id: 'MIGRATE_NODEPORT_ADDRESSES_UNVERIFIED', services: [web]}), {
        ...d,
        client: 'second-node-address',
      }),
    ).toBe(false)
  })

  it('files a difference under the first (most severe) finding that announces it', () => {
    const r = result([{service: web, checks: [check({client: 'pod'})]}])
    const a = attributeDifferences(r, [
      finding({id: 'MIGRATE_SESSION_AFFINITY_SCOPE', severity: 'warning', services: [web]}),
      finding({id: 'MIGRATE_IPVS_WEIGHTS', severity: 'info', services: [web]}),
    ])
    expect(a.announced.map((f) => f.id)).toEqual(['MIGRATE_SESSION_AFFINITY_SCOPE'])
  })
})

describe('renderVerify with attributed differences', () => {
  const web = 'default/web:http/tcp'
  it('lists differences under their finding, then the unexpected ones, and says how many are not announced', () => {
    const r = result([
      {
        service: web,
        checks: [check({client: 'second-node-address', frontend: '192.0.2.20:30080'}), check({})],
      },
    ])
    r.attributed = attributeDifferences(r, [finding({services: [web]})])
    const text = renderVerify(r, plainStyle)
    const after = text.slice(text.indexOf('Differences by the migration finding (to nftables)'))
    expect(after).toContain(
      'MIGRATE_NODEPORT_ADDRESSES  NodePorts on non-primary node addresses stop working in nftables mode\n' +
        `    ${web} from second-node-address 198.51.100.2 to 192.0.2.20:30080: rejected, expected forwarded\n` +
        '  unexpected differences  (no migration finding announces them)\n' +
        `    ${web} from external 198.51.100.2 to 10.96.0.10:80: rejected, expected forwarded`,
    )
    expect(after).toContain('1 of 2 difference(s) are not announced by any migration finding.')
  })

  it('says so when every difference is announced', () => {
    const r = result([
      {
        service: web,
        checks: [check({client: 'second-node-address', frontend: '192.0.2.20:30080'})],
      },
    ])
    r.attributed = attributeDifferences(r, [finding({services: [web]})])
    expect(renderVerify(r, plainStyle)).toContain(
      'All 1 difference(s) are announced by migration findings.',
    )
  })
})

describe('differences announced by the findings of planMigration', () => {
  it('nftables -> iptables: a pod to a ClusterIP on an unused port passes, filed under MIGRATE_CLUSTER_IP_OTHER_PORTS_OPEN', () => {
    const web = 'ns/web:http/tcp'
    const r = result([
      {
        service: web,
        checks: [
          check({
            client: 'unused-port',
            frontend: '10.96.0.10:40000',
            source: '10.244.0.2',
            observed: {passed: 3},
            differences: ['passed, expected rejected'],
          }),
        ],
      },
    ])
    const a = attributeDifferences(r, planMigration(state('nftables', [sp('web')]), 'iptables'))
    expect(a.unexpected).toEqual([])
    expect(a.announced.map((f) => f.id)).toEqual(['MIGRATE_CLUSTER_IP_OTHER_PORTS_OPEN'])
  })

  it("KUBE-XLB before ≈1.15 -> newer: the node's own connection to an ETP=Local NodePort, filed under MIGRATE_NODE_TO_LOCAL_SERVICE_ALL_ENDPOINTS", () => {
    const svc = sp('web', {
      externalTrafficPolicy: 'Local',
      externalFromNode: 'policy',
      frontends: [fe('ClusterIP', '10.96.0.20', 80), fe('NodePort', null, 30080)],
    })
    const localhost = check({
      client: 'localhost',
      frontend: '127.0.0.1:30080',
      source: '127.0.0.1',
      observed: {'forwarded 10.244.1.5:8080': 3},
      differences: ['forwarded to 10.244.1.5:8080, expected dropped'],
    })
    // The same service's ClusterIP from the node is not what the finding announces.
    const clusterIp = check({client: 'node', frontend: '10.96.0.20:80', source: '198.18.0.10'})
    const r = result([{service: 'ns/web:http/tcp', checks: [localhost, clusterIp]}])
    for (const to of ['iptables', 'nftables'] as const) {
      const a = attributeDifferences(r, planMigration(state('iptables', [svc]), to))
      const filed = a.announced.find((f) => f.id === 'MIGRATE_NODE_TO_LOCAL_SERVICE_ALL_ENDPOINTS')
      expect(filed?.differences.map((d) => d.frontend)).toEqual(['127.0.0.1:30080'])
      expect(a.unexpected.map((d) => d.frontend)).toEqual(['10.96.0.20:80'])
    }
  })
})
