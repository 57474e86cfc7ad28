/**
 * The kube parser on the shapes of docs/ipvs-layouts.md c.1 (List, *List, multi-document
 * YAML, single objects, JSON) and on bad input: it never throws, and every problem is a coded
 * diagnostic at the line of the object (or of the YAML error).
 */
import {describe, expect, it} from 'vitest'
import {parseKube} from '../../../src/readers/kube/parse.js'
import {sniffFormat} from '../../../src/readers/registry.js'
import {clusterState, errors, fixtureText, frontendsOf, portOf} from './helpers.js'

const parse = (text: string) => parseKube({path: 'in.yaml', text})
const diags = (text: string) =>
  parse(text).diagnostics.map((d) => `${d.severity} ${d.code} ${d.source?.path}:${d.source?.line}`)

const SERVICE = `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
spec:
  clusterIP: 10.96.0.20
  ports:
  - name: http
    port: 80
    protocol: TCP
`
const SLICE = `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-abc
  namespace: shop
  labels:
    kubernetes.io/service-name: web
addressType: IPv4
endpoints:
- addresses:
  - 10.244.0.5
ports:
- name: http
  port: 8080
  protocol: TCP
`

describe('kube parse: the input shapes', () => {
  it('reads a multi-document stream of single objects, each at its own line', () => {
    const text = `# exported by hand\n---\n${SERVICE}---\n${SLICE}`
    const p = parse(text)
    expect(p.diagnostics).toEqual([])
    expect(p.data.services.map((s) => `${s.namespace}/${s.name}@${s.ref.line}`)).toEqual([
      'shop/web@3',
    ])
    // "# exported", "---", 11 Service lines, "---": the slice starts at line 15.
    expect(p.data.slices.map((s) => `${s.namespace}/${s.name}@${s.ref.line}`)).toEqual([
      'shop/web-abc@15',
    ])
    expect(p.data.slices[0]?.endpoints[0]).toEqual({
      addresses: ['10.244.0.5'],
      ready: null,
      serving: null,
      terminating: null,
      nodeName: null,
      zone: null,
      zoneHints: [],
      nodeHints: [],
    })
  })

  it('reads a ServiceList and an EndpointSliceList', () => {
    const indent = (s: string) =>
      s
        .trimEnd()
        .split('\n')
        .map((l, i) => (i === 0 ? `- ${l}` : `  ${l}`))
        .join('\n')
    const text = `apiVersion: v1\nkind: ServiceList\nitems:\n${indent(SERVICE)}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSliceList\nitems:\n${indent(SLICE)}\n`
    const p = parse(text)
    expect(p.diagnostics).toEqual([])
    expect(p.data.services.map((s) => s.ref.line)).toEqual([4])
    expect(p.data.slices.map((s) => s.ref.line)).toEqual([19])
  })

  it('reads kubectl -o json (a JSON List) like the YAML, with lines', async () => {
    const obj = (yamlText: string) => {
      // The same objects written as JSON by hand.
      return yamlText === SERVICE
        ? {
            apiVersion: 'v1',
            kind: 'Service',
            metadata: {name: 'web', namespace: 'shop'},
            spec: {clusterIP: '10.96.0.20', ports: [{name: 'http', port: 80, protocol: 'TCP'}]},
          }
        : {
            apiVersion: 'discovery.k8s.io/v1',
            kind: 'EndpointSlice',
            metadata: {
              name: 'web-abc',
              namespace: 'shop',
              labels: {'kubernetes.io/service-name': 'web'},
            },
            addressType: 'IPv4',
            endpoints: [{addresses: ['10.244.0.5']}],
            ports: [{name: 'http', port: 8080, protocol: 'TCP'}],
          }
    }
    const json = JSON.stringify(
      {
        apiVersion: 'v1',
        items: [obj(SERVICE), obj(SLICE)],
        kind: 'List',
        metadata: {resourceVersion: ''},
      },
      null,
      4,
    )
    expect(sniffFormat(json)).toBe('kube')
    expect(sniffFormat(JSON.stringify({apiVersion: 'v1', kind: 'List', items: []}))).toBe('kube')
    const fromJson = await clusterState(json, {node: 'n1'})
    const fromYaml = await clusterState(`${SERVICE}---\n${SLICE}`, {node: 'n1'})
    expect(errors(fromJson)).toEqual([])
    expect(fromJson.services.map((s) => ({...s, rules: []}))).toEqual(
      fromYaml.services.map((s) => ({...s, rules: []})),
    )
    // JSON.stringify(…, 4): "{", "apiVersion", "items": [, then the Service's "{" on line 4.
    expect(portOf(fromJson, 'shop', 'web', 'http').rules[0]).toEqual({
      path: 'cluster.yaml',
      line: 4,
    })
  })

  it('reads CRLF text like LF text, with the same lines', () => {
    const lf = parse(`${SERVICE}---\n${SLICE}`)
    const crlf = parse(`${SERVICE}---\n${SLICE}`.replace(/\n/g, '\r\n'))
    expect(crlf.diagnostics).toEqual([])
    expect(crlf.data).toEqual(lf.data)
  })

  it('ignores a UTF-8 byte-order mark', () => {
    expect(parse(`\uFEFF${SERVICE}`).data.services.map((s) => s.name)).toEqual(['web'])
  })

  it('the generated kubectl fixture reads without a diagnostic from the parser', () => {
    const p = parse(
      fixtureText('ipvs-generated', 'cluster.kubectl-get-svc-endpointslices-A-o-yaml.yaml'),
    )
    expect(p.diagnostics).toEqual([])
    expect(p.data.services).toHaveLength(8)
    // kubernetes, lb, sctp, sticky, web, db-headless, and kube-dns twice (IPv4 and IPv6).
    expect(p.data.slices).toHaveLength(8)
  })
})

describe('kube parse: bad input never throws and says where', () => {
  it('empty input', () => {
    expect(diags('')).toEqual(['error KUBE_EMPTY in.yaml:1'])
    expect(diags('# nothing here\n---\n')).toEqual(['error KUBE_EMPTY in.yaml:1'])
  })

  it('garbage', () => {
    expect(diags('hello world\n')).toEqual(['error KUBE_NOT_AN_OBJECT in.yaml:1'])
    expect(diags('\u0001\u0002 binary?\n: : :\n')[0]).toMatch(/^error KUBE_/)
  })

  it('malformed YAML points at the broken line', () => {
    // Line 6 is indented by one space: it belongs to no mapping.
    expect(
      diags(
        'apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n  namespace: x\n spec:\n  ports: []\n',
      ),
    ).toEqual(['error KUBE_BAD_YAML in.yaml:6'])
    // Line 4 indents with a tab, which YAML forbids.
    expect(diags('apiVersion: v1\nkind: Service\nmetadata:\n\tname: a\n')).toEqual([
      'error KUBE_BAD_YAML in.yaml:4',
    ])
    // A broken document does not hide the good one after it.
    const p = parse(`apiVersion: v1\nkind: Service\nmetadata:\n\tname: a\n---\n${SERVICE}`)
    expect(p.diagnostics.map((d) => d.source?.line)).toEqual([4])
    expect(p.data.services.map((s) => s.ref.line)).toEqual([6])
  })

  it('malformed YAML with CRLF line ends keeps the line number', () => {
    expect(diags('apiVersion: v1\r\nkind: Service\r\nmetadata:\r\n\tname: a\r\n')).toEqual([
      'error KUBE_BAD_YAML in.yaml:4',
    ])
  })

  it('unknown kinds are info and ignored; an object without kind is an error', () => {
    const text = `${SERVICE}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n---\nmetadata:\n  name: nokind\n`
    expect(diags(text)).toEqual([
      'info KUBE_IGNORED_KIND in.yaml:13',
      'error KUBE_NO_KIND in.yaml:18',
    ])
  })

  it('an EndpointSlice of another API version is a warning and ignored', () => {
    const text = SLICE.replace('discovery.k8s.io/v1', 'discovery.k8s.io/v1beta1')
    expect(diags(text)).toEqual(['warning KUBE_UNSUPPORTED_VERSION in.yaml:1'])
    expect(parse(text).data.slices).toEqual([])
  })

  it('bad field values are warnings at the object, and the rest of the object is read', () => {
    const text =
      SERVICE.replace('    port: 80\n', '    port: eighty\n') +
      '  - name: dns\n    port: 53\n    protocol: ICMP\n  - name: ok\n    port: 8443\n'
    expect(diags(text)).toEqual([
      'warning KUBE_BAD_PORT in.yaml:1',
      'warning KUBE_BAD_PORT in.yaml:1',
      'warning KUBE_BAD_PROTOCOL in.yaml:1',
    ])
    // The port without protocol defaults to TCP (the API default).
    expect(parse(text).data.services[0]?.ports).toEqual([
      {name: 'ok', protocol: 'TCP', port: 8443, nodePort: 0},
    ])
  })

  it('alias bombs are refused, not expanded', () => {
    const bomb = [
      'apiVersion: v1',
      'kind: Service',
      'metadata: {name: b}',
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
      'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
      'd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
      'e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]',
    ].join('\n')
    expect(diags(bomb)).toEqual(['error KUBE_BAD_YAML in.yaml:1'])
  })
})

describe('kube build: bad objects', () => {
  it('a Service with no ports is a warning and gives no service port', async () => {
    const state = await clusterState(
      'apiVersion: v1\nkind: Service\nmetadata:\n  name: empty\nspec:\n  clusterIP: 10.96.0.9\n',
    )
    expect(state.services).toEqual([])
    expect(state.diagnostics.map((d) => `${d.severity} ${d.code} ${d.source?.line}`)).toContain(
      'warning KUBE_SERVICE_NO_PORTS 1',
    )
  })

  it('Services without any EndpointSlice in the input: a warning, and every port rejects', async () => {
    const state = await clusterState(SERVICE)
    expect(state.diagnostics.map((d) => `${d.severity} ${d.code}`)).toEqual([
      'warning KUBE_NO_ENDPOINTSLICES',
    ])
    expect(frontendsOf(portOf(state, 'shop', 'web', 'http'))).toEqual([
      'ClusterIP 10.96.0.20:80 reject',
    ])
  })
})

describe('kube parse: JSON lines', () => {
  it('gives each item of a JSON List the line of its opening brace, whatever the items are', () => {
    const text = [
      '{',
      '  "kind": "List",',
      '  "metadata": {"note": "items: [ { are not items here"},',
      '  "items": [',
      '    null,',
      '    {"apiVersion": "v1", "kind": "Service",',
      '     "metadata": {"name": "a"}, "spec": {"clusterIP": "10.96.0.1", "ports": [{"port": 80}]}},',
      '    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}',
      '  ]',
      '}',
    ].join('\n')
    const p = parse(text)
    expect(p.data.services.map((s) => s.ref.line)).toEqual([6])
    expect(p.diagnostics.map((d) => `${d.severity} ${d.code} ${d.source?.line}`)).toEqual([
      'error KUBE_NOT_AN_OBJECT 5',
      'info KUBE_IGNORED_KIND 8',
    ])
  })

  it('reads a bare JSON array of objects and one-line JSON', () => {
    const svc = (name: string) => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {name},
      spec: {clusterIP: '10.96.0.1', ports: [{port: 80}]},
    })
    expect(
      parse(`[\n${JSON.stringify(svc('a'))},\n${JSON.stringify(svc('b'))}\n]`).data.services.map(
        (s) => `${s.name}@${s.ref.line}`,
      ),
    ).toEqual(['a@2', 'b@3'])
    expect(
      parse(JSON.stringify(svc('one'))).data.services.map((s) => `${s.name}@${s.ref.line}`),
    ).toEqual(['one@1'])
  })

  it('broken JSON is reported by the YAML parser with its line', () => {
    // The doubled comma is on line 4.
    expect(
      diags('{\n  "kind": "List",\n  "items": [\n    {"kind": "Service",, }\n  ]\n}\n'),
    ).toEqual(['error KUBE_BAD_YAML in.yaml:4'])
  })
})

describe('kube build: duplicates', () => {
  it('a repeated Service or EndpointSlice: the later copy wins, with a warning', async () => {
    const later = SLICE.replace('10.244.0.5', '10.244.0.6')
    const state = await clusterState(`${SERVICE}---\n${SLICE}---\n${SERVICE}---\n${later}`)
    expect(
      state.diagnostics
        .filter((d) => d.code === 'KUBE_DUPLICATE_OBJECT')
        .map((d) => `${d.severity} ${d.source?.line}`),
    ).toEqual(['warning 29', 'warning 41'])
    expect(portOf(state, 'shop', 'web', 'http').endpoints.map((e) => e.ip)).toEqual(['10.244.0.6'])
  })
})

describe('kube parse: empty Lists', () => {
  it('an empty List (items: [] or items: null) is read without a diagnostic', () => {
    expect(
      diags('apiVersion: v1\nkind: List\nitems: []\nmetadata:\n  resourceVersion: ""\n'),
    ).toEqual([])
    expect(diags('apiVersion: v1\nkind: ServiceList\nitems: null\n')).toEqual([])
    expect(diags('{"apiVersion": "v1", "kind": "List", "items": null}')).toEqual([])
  })
})

describe('kube parse: the JSON fast path reads what the YAML path reads', () => {
  it('the generated kubectl scenario as `-o json` gives the same objects, each at its own "{" line', async () => {
    const {parse: parseYaml} = await import('yaml')
    const yamlText = fixtureText(
      'ipvs-generated',
      'cluster.kubectl-get-svc-endpointslices-A-o-yaml.yaml',
    )
    // kubectl -o json indents by 4; each item of "items" opens with a "{" line of 8 spaces.
    const jsonText = JSON.stringify(parseYaml(yamlText), null, 4)
    const fromYaml = parse(yamlText)
    const fromJson = parse(jsonText)
    expect(fromJson.diagnostics).toEqual([])
    const withoutRefs = (p: typeof fromYaml) => ({
      services: p.data.services.map((s) => ({...s, ref: null})),
      slices: p.data.slices.map((s) => ({...s, ref: null})),
      legacyEndpoints: p.data.legacyEndpoints.map((s) => ({...s, ref: null})),
    })
    expect(withoutRefs(fromJson)).toEqual(withoutRefs(fromYaml))
    const jsonLines = jsonText.split('\n')
    const refs = [...fromJson.data.services, ...fromJson.data.slices]
      .map((o) => o.ref.line)
      .sort((a, b) => a - b)
    expect(refs).toHaveLength(16)
    for (const line of refs) expect(jsonLines[line - 1]).toBe('        {')
    expect(new Set(refs).size).toBe(16)
  })
})
