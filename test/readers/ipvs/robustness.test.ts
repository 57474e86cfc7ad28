/**
 * Readers never throw on bad input (docs/architecture.md), also when several sources describe one node:
 * a fixed-seed run of the corpus scenario's ipvsadm + ipset + ip addr + iptables-save bundle
 * (with the cluster objects as --cluster), and of a migrate case's `ipvsadm -Sn` + saved state,
 * with one source mutated per round. Each round must give a sane state (../robustness.ts).
 */
import {readFileSync} from 'node:fs'
import {describe, it} from 'vitest'
import {ROOT} from '../../helpers/run-cli.js'
import {COMMON_NOISE, mutatedReads} from '../robustness.js'

const NOISE = [
  ...COMMON_NOISE,
  'TCP',
  'UDP',
  '  -> ',
  '[::1]:80',
  '1.2.3.4:65536',
  '-w -5',
  'create ',
  'add ',
  'hash:ip,port',
  '10.0.0.1,tcp:99999',
  'inet ',
  '10.0.0.1/99',
  '{',
  '}',
  'null',
]
const G = 'fixtures/ipvs/generated/'
const CLUSTER = `${G}cluster.kubectl-get-svc-endpointslices-A-o-yaml.yaml`

describe('mutated IPVS bundles never make the readers throw', () => {
  it('ipvsadm -Ln + ipset save + ip addr + iptables-save, with cluster objects', async () => {
    const cluster = [{path: CLUSTER, text: readFileSync(`${ROOT}${CLUSTER}`, 'utf8')}]
    const files = [
      `${G}ipvsadm-Ln.txt`,
      `${G}ipset-save.ipvs-mode.txt`,
      'fixtures/ip-addr/real-netns/ip-addr.txt',
      `${G}iptables-save.ipvs-mode.nft-backend.txt`,
    ]
    await mutatedReads({
      files,
      mutable: [0, 1, 2],
      noise: NOISE,
      rounds: 150,
      opts: {cluster, node: 'node-a'},
    })
  })

  it('ipvsadm -Sn + ipset list + ip -j addr', async () => {
    await mutatedReads({
      files: [
        `${G}ipvsadm-Sn.txt`,
        `${G}ipset-list.ipvs-mode.txt`,
        'fixtures/ip-addr/real-netns/ip-j-p-addr.json',
      ],
      noise: NOISE,
      rounds: 150,
    })
  })

  it('ipvsadm -Sn + a saved state (migrate)', async () => {
    await mutatedReads({
      files: [
        'fixtures/migrate/ipvs-node-a/ipvsadm-Sn.txt',
        'fixtures/migrate/ipvs-node-a/state.json',
      ],
      noise: NOISE,
      rounds: 100,
    })
  })
})
