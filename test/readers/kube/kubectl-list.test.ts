/**
 * readKubectlList (src/readers/kube/parse.ts) parses the items of kubectl's `-o yaml` List one by
 * one instead of the text as one document. Whatever the input, parseKube must give what the
 * one-document parse gives (objects, diagnostics and their lines); the fast path only decides
 * how fast.
 */
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {parseKube, readKubectlList} from '../../../src/readers/kube/parse.js'
import {ROOT} from '../../helpers/run-cli.js'
import {mutate, prng} from '../robustness.js'

const FIXTURES = [
  'fixtures/kube/iptables-overall/cluster.yaml',
  'fixtures/kube/ipvs-generated/cluster.kubectl-get-svc-endpointslices-A-o-yaml.yaml',
]
const texts = FIXTURES.map((f) => readFileSync(join(ROOT, f), 'utf8'))

const bothWays = (text: string) => [
  parseKube({path: 'c.yaml', text}),
  parseKube({path: 'c.yaml', text}, {oneDocument: true}),
]
const takesFastPath = (text: string) =>
  readKubectlList('c.yaml', text, [], {services: [], slices: [], legacyEndpoints: []})

/** A List of n Services the way kubectl writes it. */
function kubectlList(n: number): string {
  const items = Array.from({length: n}, (_, i) =>
    [
      `- apiVersion: v1`,
      `  kind: Service`,
      `  metadata:`,
      `    name: svc-${i}`,
      `    namespace: ns`,
      `  spec:`,
      `    clusterIP: 10.96.0.${i + 1}`,
      `    ports:`,
      `    - name: http`,
      `      port: 80`,
      `      protocol: TCP`,
      `    type: ClusterIP`,
    ].join('\n'),
  )
  return [
    'apiVersion: v1',
    'items:',
    ...items,
    'kind: List',
    'metadata:',
    '  resourceVersion: ""',
    '',
  ].join('\n')
}

describe('readKubectlList', () => {
  it('takes kubectl -o yaml Lists, and gives what the one-document parse gives', () => {
    for (const text of [...texts, kubectlList(3)]) {
      expect(takesFastPath(text)).toBe(true)
      const [fast, whole] = bothWays(text)
      expect(fast).toEqual(whole)
      expect(fast!.data.services.length).toBeGreaterThan(0)
    }
  })

  it('leaves every other shape to the one-document parse', () => {
    const list = kubectlList(2)
    for (const text of [
      `---\n${list}`, // a document marker
      `%YAML 1.1\n---\n${list}`, // a directive
      list.replaceAll('\n- ', '\n  - ').replaceAll('\n  ', '\n    ').replace('\n    - ', '\n  - '), // indented items
      list.replace('name: svc-0', 'name: &n svc-0').replace('name: svc-1', 'name: *n'), // an alias into another item
      list.replace('port: 80', 'port: 80\n      port: 81'), // a duplicate key: the parser's error
      list.replace('kind: List', 'kind: Service'), // not a List
      list.replace(
        '- apiVersion: v1\n  kind: Service',
        '- kind: List\n  items:\n  - kind: Service',
      ), // a List in an item
    ]) {
      expect(takesFastPath(text), text.slice(0, 60)).toBe(false)
      const [a, b] = bothWays(text)
      expect(a).toEqual(b)
    }
  })

  it('gives the same as the one-document parse on 300 mutated Lists', () => {
    const rnd = prng(4242)
    const noise = [
      '- ',
      '  ',
      '\n',
      ':',
      '#',
      '&a ',
      '*a',
      '---\n',
      'items:\n',
      'kind: List\n',
      '%',
      '"',
      "'",
      '\t',
      '{',
      '[',
    ]
    let fast = 0
    for (let i = 0; i < 300; i++) {
      const text = mutate([...texts, kubectlList(4)][i % 3]!, rnd, noise)
      if (takesFastPath(text)) fast++
      const [a, b] = bothWays(text)
      expect(a, `#${i}`).toEqual(b)
    }
    // Most mutations leave a List kubectl could have written: the comparison is of the fast path, not of the fallback with itself.
    expect(fast).toBeGreaterThan(50)
  })
})
