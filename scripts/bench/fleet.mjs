#!/usr/bin/env node
/**
 * Fleet bench (docs/benchmarks.md, "Fleet"): NODES node bundles of SERVICES × 10 endpoints in
 * iptables-save form, indexed by fleet.json as `kp collect --all-nodes` writes them, then the built
 * kp's `migrate --check --fleet` and `diff --fleet` over them at --parallel 10; wall seconds and peak
 * RSS by /usr/bin/time, median of 3.
 *   node scripts/bench/fleet.mjs [NODES=20] [SERVICES=1000]
 */
import {spawnSync} from 'node:child_process'
import {copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {generateIptablesSave} from './gen-iptables.mjs'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const NODES = Number(process.argv[2] ?? 20)
const SERVICES = Number(process.argv[3] ?? 1000)
const dir = mkdtempSync(join(tmpdir(), 'kp-bench-fleet-'))
try {
  const dump = join(dir, 'dump.txt')
  await generateIptablesSave(dump, {services: SERVICES, endpointsPerService: 10})
  const nodes = []
  for (let i = 0; i < NODES; i++) {
    const name = `node-${String(i).padStart(2, '0')}`
    const node = join(dir, 'fleet', 'nodes', name)
    mkdirSync(node, {recursive: true})
    copyFileSync(dump, join(node, 'iptables-save.txt'))
    nodes.push({name, dir: `nodes/${name}`, error: null, code: null})
  }
  const fleet = join(dir, 'fleet')
  const index = {
    kind: 'KpFleet',
    schemaVersion: 1,
    createdBy: 'bench',
    createdAt: new Date().toISOString(),
    selector: null,
    interrupted: false,
    nodes,
  }
  writeFileSync(join(fleet, 'fleet.json'), JSON.stringify(index))
  const runs = {
    'migrate --check': [
      'migrate',
      '--to',
      'nftables',
      '--check',
      '--fleet',
      fleet,
      '--parallel',
      '10',
      '--json',
    ],
    diff: ['diff', '--fleet', fleet, '--parallel', '10', '--json'],
  }
  for (const [label, args] of Object.entries(runs)) {
    const times = []
    let rss = 0
    for (let i = 0; i < 3; i++) {
      const r = spawnSync(
        '/usr/bin/time',
        ['-f', '%e %M', process.execPath, join(ROOT, 'bin/run.js'), ...args],
        {
          encoding: 'utf8',
          maxBuffer: 1 << 30,
        },
      )
      const [wall, kb] = r.stderr.trim().split('\n').at(-1).split(' ').map(Number)
      times.push(wall)
      rss = Math.max(rss, kb)
      if (r.status !== 0 && r.status !== 1)
        throw new Error(`${label}: exit ${r.status}\n${r.stderr}`)
    }
    times.sort((a, b) => a - b)
    console.log(
      `${label}: ${NODES} nodes × ${SERVICES} services × 10 endpoints, --parallel 10: ${times[1]} s (median of ${times.join(', ')}), peak ${Math.round(rss / 1024)} MB`,
    )
  }
} finally {
  rmSync(dir, {recursive: true, force: true})
}
