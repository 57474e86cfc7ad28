/**
 * Inputs for IPVS virtual servers that disagree (issue 21 §4, kubernetes #89923), built from the
 * corpus listing fixtures/ipvs/generated/ipvsadm-Ln.txt: a 127.0.0.1 copy of a NodePort virtual
 * server with one real server dropped.
 */
import {readFileSync} from 'node:fs'
import type {ProxyState} from '../../src/model/types.js'
import {readState} from '../../src/readers/read-state.js'
import {ROOT} from './run-cli.js'

const G = 'fixtures/ipvs/generated/'
export const IPVSADM_LN = readFileSync(`${ROOT}${G}ipvsadm-Ln.txt`, 'utf8')
export const IPSET_SAVE = readFileSync(`${ROOT}${G}ipset-save.ipvs-mode.txt`, 'utf8')

const RS = (addr: string) => `  -> ${addr.padEnd(28)} Masq    1      0          0         \n`

/**
 * The listing with `PROTO  127.0.0.1:PORT`, a copy of the node's NodePort virtual server
 * `PROTO  10.0.0.10:PORT` (`head`) without the real server `drop` (null: with all), appended at the end.
 */
export function withLoopbackNodePort(listing: string, head: string, drop: string | null): string {
  const lines = listing.trimEnd().split('\n')
  const start = lines.findIndex((l) => l.startsWith(`${head} `))
  if (start < 0) throw new Error(`${head} is not in the listing`)
  let end = start + 1
  while (end < lines.length && lines[end]!.startsWith('  ->')) end++
  const servers = lines.slice(start + 1, end)
  const kept = drop === null ? servers : servers.filter((l) => !l.includes(` ${drop} `))
  if (drop !== null && kept.length !== servers.length - 1)
    throw new Error(`${drop} is not a real server of ${head}`)
  const copy = [lines[start]!.replace('10.0.0.10:', '127.0.0.1:'), ...kept]
  return [...lines, ...copy].join('\n') + '\n'
}

/** default/web (ClusterIP 10.96.100.20:80, NodePort 30080, externalIP 10.0.200.5) with a second ready endpoint, 10.244.3.3:8080. */
export function webWithTwoReady(listing = IPVSADM_LN): string {
  let out = listing
  for (const head of [
    'TCP  10.96.100.20:80 rr\n',
    'TCP  10.0.0.10:30080 rr\n',
    'TCP  10.0.200.5:80 rr\n',
  ]) {
    if (!out.includes(head)) throw new Error(`${head} is not in the listing`)
    out = out.replace(head, head + RS('10.244.3.3:8080'))
  }
  return out
}

/** kubernetes #89923 on default/web: the NodePort on 127.0.0.1 lacks 10.244.3.3:8080. */
export function loopbackNodePortLacksOne(): string {
  return withLoopbackNodePort(webWithTwoReady(), 'TCP  10.0.0.10:30080', '10.244.3.3:8080')
}

export function readIpvs(listing: string, ipset = true): Promise<ProxyState> {
  return readState({
    sources: [
      {path: 'ipvsadm.txt', text: listing},
      ...(ipset ? [{path: 'ipset.txt', text: IPSET_SAVE}] : []),
    ],
  })
}
