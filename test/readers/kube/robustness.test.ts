/**
 * Readers never throw on bad input (docs/architecture.md): a fixed-seed run of mutated cluster objects
 * (kubectl YAML) through readState, sniffed and forced, with YAML's own odd tokens (anchors,
 * aliases, tags, flow collections, document markers) and wrong-typed fields. Each round must
 * give a sane state (../robustness.ts).
 */
import {describe, it} from 'vitest'
import {COMMON_NOISE, mutatedReads} from '../robustness.js'

const NOISE = [
  ...COMMON_NOISE,
  ': ',
  '- ',
  '{',
  '}',
  '[',
  ']',
  'null',
  '~',
  '&a ',
  '*a',
  '!!binary ',
  '!!str ',
  '<<: *a',
  '? ',
  '|',
  '>',
  '---\n',
  '...\n',
  'kind: Service\n',
  'kind: EndpointSlice\n',
  'kind: List\n',
  'items:\n',
  'port: 70000\n',
  'port: -1\n',
  'port: x\n',
  'ports: null\n',
  'endpoints: 5\n',
  'addresses: [null]\n',
  'clusterIP: "::1::"\n',
  'spec: 1\n',
  'metadata: null\n',
  '    ',
]

describe('mutated cluster objects never make the reader throw', () => {
  for (const file of [
    'fixtures/kube/iptables-overall/cluster.yaml',
    'fixtures/kube/ipvs-generated/cluster.kubectl-get-svc-endpointslices-A-o-yaml.yaml',
  ]) {
    it(file, async () => {
      await mutatedReads({files: [file], format: 'kube', noise: NOISE, rounds: 100})
    })
  }
})
