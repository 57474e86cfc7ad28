/**
 * Fleet folders written by hand, in the shape `kp collect --all-nodes --out DIR` writes
 * (src/readers/fleet.ts): one bundle per node and fleet.json. The nodes are kube-proxy's own
 * upstream test dump, some changed: a stale service left on one, a service missing on another.
 */
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import type {FleetIndex} from '../../src/readers/fleet.js'
import {NODE_A_FACTS, bundleFile, writeBundle} from './bundle.js'
import {ROOT} from './run-cli.js'

export const UPSTREAM = readFileSync(
  join(ROOT, 'fixtures/iptables/upstream-overall/input.rules'),
  'utf8',
)

/** A REJECT rule for a service the others no longer have: what a crashed kube-proxy leaves behind. */
export const STALE_LINE =
  '-A KUBE-SERVICES -m comment --comment "ns9/stale:p80 has no endpoints" -m tcp -p tcp -d 172.30.0.99 --dport 80 -j REJECT'

/** The upstream dump with the stale service added. */
export function withStale(text: string): string {
  return text.replace(/^(-A KUBE-SERVICES .*ns6\/svc6.*)$/m, `$1\n${STALE_LINE}`)
}

/** The upstream dump without ns6/svc6. */
export function withoutSvc6(text: string): string {
  return text.replace(/^-A KUBE-SERVICES .*ns6\/svc6.*\n/m, '')
}

/**
 * Writes fleet folder `dir` with one bundle per node (`rules` gives each node's iptables-save);
 * a node whose rules are null is recorded as not collected, with `error`.
 */
export function writeFleet(
  dir: string,
  nodes: Array<{name: string; rules: string | null; error?: string}>,
  over: Partial<FleetIndex> = {},
): string {
  const index: FleetIndex = {
    kind: 'KpFleet',
    schemaVersion: 1,
    createdBy: 'kp/0.1.0',
    createdAt: '2026-12-05T21:00:00.000Z',
    selector: null,
    interrupted: false,
    nodes: nodes.map((n) => ({
      name: n.name,
      dir: n.rules === null ? null : `nodes/${n.name}`,
      error: n.rules === null ? (n.error ?? 'not collected') : null,
      code: n.rules === null ? 'LIVE_TIMEOUT' : null,
    })),
    ...over,
  }
  for (const n of nodes) {
    if (n.rules === null) continue
    writeBundle(join(dir, 'nodes', n.name), [[bundleFile('iptables-save.txt'), n.rules]], {
      ...NODE_A_FACTS,
      node: n.name,
    })
  }
  writeFileSync(join(dir, 'fleet.json'), JSON.stringify(index, null, 2))
  return dir
}
