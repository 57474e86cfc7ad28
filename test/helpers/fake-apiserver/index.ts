/**
 * A STAND-IN kube-apiserver for the tests of reaching nodes through kubectl (there is no cluster
 * here; the real kubectl client talks to this). It serves what kubectl needs for `get --raw`,
 * `exec`, `create --raw` and `delete --raw`: discovery (/api, /apis, /version), nodes, pods (with
 * fieldSelector spec.nodeName= and labelSelector), services, endpointslices, pod create/delete
 * (recorded), and `pods/exec` over WebSocket (v5/v4.channel.k8s.io), which runs the command in the
 * network namespace standing for the pod's node with only the tools of the kube-proxy image on
 * PATH. Requests can be refused as RBAC would (`forbid`).
 *
 * What it does NOT cover: authentication and real RBAC evaluation, admission, scheduling (pods
 * run at once), watches, the kubelet/CRI stream path (SPDY, kubectl < 1.30), resource versions.
 */
import {spawn} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync} from 'node:fs'
import {type IncomingMessage, type ServerResponse, createServer} from 'node:http'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'
import {WebSocketServer} from 'ws'
import {parseAllDocuments} from 'yaml'

export interface StandInNode {
  name: string
  /** The network namespace whose rules this node has. */
  netns: string
  labels?: Record<string, string>
  /** The folder of programs on PATH in this node's pods (kubeProxyTools()). */
  tools: string
}

export interface StandInPod {
  metadata: {name: string; namespace: string; labels?: Record<string, string>}
  spec: {
    nodeName?: string
    containers: Array<{name: string; image?: string; command?: string[]; args?: string[]}>
    [k: string]: unknown
  }
  status?: {phase?: string}
}

export interface Recorded {
  method: string
  path: string
  /** The pod created (POST body). */
  body?: unknown
}

/** The programs of the kube-proxy image (distroless-iptables): no ip, ipvsadm, uname, conntrack. */
const IMAGE_TOOLS = [
  'iptables',
  'iptables-save',
  'iptables-restore',
  'iptables-nft',
  'iptables-nft-save',
  'iptables-legacy',
  'iptables-legacy-save',
  'ip6tables',
  'ip6tables-save',
  'ip6tables-nft-save',
  'ip6tables-legacy-save',
  'ipset',
  'nft',
  'sh',
  'cat',
  'grep',
  'wc',
  'sleep',
]

function which(tool: string): string | null {
  for (const d of ['/usr/sbin', '/usr/bin', '/sbin', '/bin'])
    if (existsSync(join(d, tool))) return join(d, tool)
  return null
}

/**
 * A folder standing for the kube-proxy image's PATH. `nftJson: false` puts an nft there that
 * answers `-j` as an nft built without JSON does (images of 2026-06/07).
 */
export function kubeProxyTools(dir: string, opts: {nftJson?: boolean} = {}): string {
  mkdirSync(dir, {recursive: true})
  for (const t of IMAGE_TOOLS) {
    const at = which(t)
    if (at === null) continue
    if (t === 'nft' && opts.nftJson === false) {
      writeFileSync(
        join(dir, 'nft'),
        `#!/bin/sh\nfor a; do if [ "$a" = -j ]; then echo "Error: JSON support not compiled-in" >&2; exit 1; fi; done\nexec ${at} "$@"\n`,
        {mode: 0o755},
      )
      continue
    }
    symlinkSync(at, join(dir, t))
  }
  return dir
}

type Obj = Record<string, unknown>

function labelsMatch(labels: Record<string, string> | undefined, selector: string | null): boolean {
  if (!selector) return true
  return selector.split(',').every((term) => {
    const l = labels ?? {}
    const ne = /^([^!=]+)!=(.*)$/.exec(term)
    if (ne) return l[ne[1]!] !== ne[2]
    const eq = /^([^=]+)==?(.*)$/.exec(term)
    if (eq) return l[eq[1]!] === eq[2]
    if (term.startsWith('!')) return !(term.slice(1) in l)
    return term in l
  })
}

function fieldsMatch(pod: StandInPod, selector: string | null): boolean {
  if (!selector) return true
  return selector.split(',').every((term) => {
    const m = /^spec\.nodeName=(.*)$/.exec(term)
    if (m) return pod.spec.nodeName === m[1]
    throw new Error(`stand-in: field selector ${term} not supported`)
  })
}

export class StandInApiServer {
  nodes: StandInNode[] = []
  pods: StandInPod[] = []
  services: Obj[] = []
  endpointSlices: Obj[] = []
  /** Every create and delete of a pod, and every exec, in order. */
  recorded: Recorded[] = []
  /** "verb resource" pairs refused as RBAC would: "create pods/exec", "list services". */
  forbid = new Set<string>()
  /** Holds every exec this long before running it (a slow node, to interrupt kp mid-read). */
  execDelayMs = 0
  private server = createServer((req, res) => this.handle(req, res))
  private wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (protocols) =>
      ['v5.channel.k8s.io', 'v4.channel.k8s.io'].find((p) => protocols.has(p)) ?? false,
  })
  port = 0

  /** Serves the Services and EndpointSlices of a cluster YAML file (documents or kind: List). */
  addClusterObjects(path: string): void {
    for (const doc of parseAllDocuments(readFileSync(path, 'utf8'))) {
      const o = doc.toJS() as {kind?: string; items?: Array<{kind?: string}>}
      for (const item of o.kind === 'List' ? (o.items ?? []) : [o]) {
        if (item.kind === 'Service') this.services.push(item)
        if (item.kind === 'EndpointSlice') this.endpointSlices.push(item)
      }
    }
  }

  async start(): Promise<this> {
    this.server.on('upgrade', (req, socket, head) => {
      const url = new URL(req.url ?? '/', 'http://x')
      const m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/exec$/.exec(url.pathname)
      if (!m) return socket.destroy()
      if (this.forbid.has('create pods/exec')) {
        const body = JSON.stringify(this.forbidden('create', 'pods/exec', m[1]!, m[2]!))
        socket.end(
          `HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        )
        return
      }
      this.wss.handleUpgrade(req, socket, head, (ws) =>
        setTimeout(() => this.exec(ws, m[1]!, m[2]!, url), this.execDelayMs),
      )
    })
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    this.port = (this.server.address() as AddressInfo).port
    return this
  }

  async stop(): Promise<void> {
    for (const c of this.wss.clients) c.terminate()
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  /** A kubeconfig pointing kubectl at this stand-in (plain http: no TLS to set up). */
  kubeconfig(path: string): string {
    writeFileSync(
      path,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        `- name: standin`,
        `  cluster: {server: "http://127.0.0.1:${this.port}"}`,
        'users:',
        '- name: tester',
        '  user: {token: standin-token}',
        'contexts:',
        '- name: standin',
        '  context: {cluster: standin, user: tester}',
        'current-context: standin',
        '',
      ].join('\n'),
    )
    return path
  }

  /** A kubeadm-like kube-proxy DaemonSet pod on `node`. */
  addKubeProxyPod(
    node: string,
    opts: Partial<{
      name: string
      namespace: string
      labels: Record<string, string>
      command: string[]
    }> = {},
  ): StandInPod {
    const pod: StandInPod = {
      metadata: {
        name: opts.name ?? `kube-proxy-${node}`,
        namespace: opts.namespace ?? 'kube-system',
        labels: opts.labels ?? {'k8s-app': 'kube-proxy'},
      },
      spec: {
        nodeName: node,
        hostNetwork: true,
        containers: [
          {
            name: 'kube-proxy',
            image: 'registry.k8s.io/kube-proxy:v1.32.0',
            command: opts.command ?? [
              '/usr/local/bin/kube-proxy',
              '--config=/var/lib/kube-proxy/config.conf',
              `--hostname-override=${node}`,
            ],
          },
        ],
      },
      status: {phase: 'Running'},
    }
    this.pods.push(pod)
    return pod
  }

  private forbidden(verb: string, resource: string, namespace: string | null, name: string | null) {
    const [res, sub] = resource.split('/')
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `${res}${name ? ` "${name}"` : ''} is forbidden: User "tester" cannot ${verb} resource "${resource}" in API group ""${namespace ? ` in the namespace "${namespace}"` : ' at the cluster scope'}`,
      reason: 'Forbidden',
      details: {name: name ?? undefined, kind: sub ? res : resource},
      code: 403,
    }
  }

  private send(res: ServerResponse, code: number, body: unknown): void {
    const text = JSON.stringify(body)
    res.writeHead(code, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(text),
    })
    res.end(text)
  }

  private notFound(res: ServerResponse, what: string): void {
    this.send(res, 404, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `${what} not found`,
      reason: 'NotFound',
      code: 404,
    })
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://x')
    const p = url.pathname
    const labelSel = url.searchParams.get('labelSelector')
    const fieldSel = url.searchParams.get('fieldSelector')
    const deny = (
      verb: string,
      resource: string,
      ns: string | null = null,
      name: string | null = null,
    ) => {
      if (!this.forbid.has(`${verb} ${resource}`)) return false
      this.send(res, 403, this.forbidden(verb, resource, ns, name))
      return true
    }
    if (req.method === 'GET') {
      if (p === '/version')
        return this.send(res, 200, {major: '1', minor: '32', gitVersion: 'v1.32.0-standin'})
      if (p === '/api')
        return this.send(res, 200, {
          kind: 'APIVersions',
          versions: ['v1'],
          serverAddressByClientCIDRs: [
            {clientCIDR: '0.0.0.0/0', serverAddress: `127.0.0.1:${this.port}`},
          ],
        })
      if (p === '/apis')
        return this.send(res, 200, {
          kind: 'APIGroupList',
          apiVersion: 'v1',
          groups: [
            {
              name: 'discovery.k8s.io',
              versions: [{groupVersion: 'discovery.k8s.io/v1', version: 'v1'}],
              preferredVersion: {groupVersion: 'discovery.k8s.io/v1', version: 'v1'},
            },
          ],
        })
      if (p === '/api/v1')
        return this.send(res, 200, {
          kind: 'APIResourceList',
          groupVersion: 'v1',
          resources: [
            {
              name: 'nodes',
              singularName: 'node',
              namespaced: false,
              kind: 'Node',
              verbs: ['get', 'list'],
            },
            {
              name: 'pods',
              singularName: 'pod',
              namespaced: true,
              kind: 'Pod',
              verbs: ['create', 'delete', 'get', 'list'],
            },
            {
              name: 'pods/exec',
              singularName: '',
              namespaced: true,
              kind: 'PodExecOptions',
              verbs: ['create', 'get'],
            },
            {
              name: 'services',
              singularName: 'service',
              namespaced: true,
              kind: 'Service',
              verbs: ['get', 'list'],
            },
          ],
        })
      if (p === '/apis/discovery.k8s.io/v1')
        return this.send(res, 200, {
          kind: 'APIResourceList',
          groupVersion: 'discovery.k8s.io/v1',
          resources: [
            {
              name: 'endpointslices',
              singularName: 'endpointslice',
              namespaced: true,
              kind: 'EndpointSlice',
              verbs: ['get', 'list'],
            },
          ],
        })
      if (p === '/api/v1/nodes') {
        if (deny('list', 'nodes')) return
        const items = this.nodes
          .filter((n) => labelsMatch(n.labels, labelSel))
          .map((n) => this.nodeObject(n))
        return this.send(res, 200, {kind: 'NodeList', apiVersion: 'v1', metadata: {}, items})
      }
      const node = /^\/api\/v1\/nodes\/([^/]+)$/.exec(p)
      if (node) {
        if (deny('get', 'nodes')) return
        const n = this.nodes.find((x) => x.name === decodeURIComponent(node[1]!))
        return n
          ? this.send(res, 200, this.nodeObject(n))
          : this.notFound(res, `nodes "${node[1]}"`)
      }
      const pods = /^\/api\/v1(?:\/namespaces\/([^/]+))?\/pods$/.exec(p)
      if (pods) {
        const ns = pods[1] ? decodeURIComponent(pods[1]) : null
        if (deny('list', 'pods', ns)) return
        const items = this.pods.filter(
          (x) =>
            (ns === null || x.metadata.namespace === ns) &&
            labelsMatch(x.metadata.labels, labelSel) &&
            fieldsMatch(x, fieldSel),
        )
        return this.send(res, 200, {kind: 'PodList', apiVersion: 'v1', metadata: {}, items})
      }
      const pod = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)$/.exec(p)
      if (pod) {
        const ns = decodeURIComponent(pod[1]!)
        if (deny('get', 'pods', ns)) return
        const x = this.findPod(ns, decodeURIComponent(pod[2]!))
        return x
          ? this.send(res, 200, {kind: 'Pod', apiVersion: 'v1', ...x})
          : this.notFound(res, `pods "${pod[2]}"`)
      }
      if (p === '/api/v1/services') {
        if (deny('list', 'services')) return
        return this.send(res, 200, {
          kind: 'ServiceList',
          apiVersion: 'v1',
          metadata: {},
          items: this.services.map(stripKind),
        })
      }
      if (p === '/apis/discovery.k8s.io/v1/endpointslices') {
        if (deny('list', 'endpointslices')) return
        return this.send(res, 200, {
          kind: 'EndpointSliceList',
          apiVersion: 'discovery.k8s.io/v1',
          metadata: {},
          items: this.endpointSlices.map(stripKind),
        })
      }
    }
    if (req.method === 'POST') {
      const create = /^\/api\/v1\/namespaces\/([^/]+)\/pods$/.exec(p)
      if (create) {
        const ns = decodeURIComponent(create[1]!)
        if (deny('create', 'pods', ns)) return
        const chunks: Buffer[] = []
        req.on('data', (c: Buffer) => chunks.push(c))
        req.on('end', () => {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as StandInPod
          body.metadata.namespace = ns
          // No scheduler, no kubelet: the pod runs at once on its nodeName.
          body.status = {phase: 'Running'}
          this.pods.push(body)
          this.recorded.push({method: 'POST', path: p, body})
          this.send(res, 201, {kind: 'Pod', apiVersion: 'v1', ...body})
        })
        return
      }
    }
    if (req.method === 'DELETE') {
      const del = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)$/.exec(p)
      if (del) {
        const ns = decodeURIComponent(del[1]!)
        const name = decodeURIComponent(del[2]!)
        if (deny('delete', 'pods', ns, name)) return
        const x = this.findPod(ns, name)
        this.recorded.push({method: 'DELETE', path: p})
        if (!x) return this.notFound(res, `pods "${name}"`)
        this.pods = this.pods.filter((y) => y !== x)
        return this.send(res, 200, {kind: 'Pod', apiVersion: 'v1', ...x})
      }
    }
    this.notFound(res, `${req.method} ${p}`)
  }

  private findPod(ns: string, name: string): StandInPod | undefined {
    return this.pods.find((x) => x.metadata.namespace === ns && x.metadata.name === name)
  }

  private nodeObject(n: StandInNode): Obj {
    return {
      kind: 'Node',
      apiVersion: 'v1',
      metadata: {name: n.name, labels: n.labels ?? {}},
      status: {conditions: [{type: 'Ready', status: 'True'}]},
    }
  }

  /** pods/exec: the command runs in the pod's node namespace, with the image's tools only. */
  private exec(ws: import('ws').WebSocket, ns: string, name: string, url: URL): void {
    const command = url.searchParams.getAll('command')
    this.recorded.push({method: 'EXEC', path: `${ns}/${name}: ${command.join(' ')}`})
    const pod = this.findPod(ns, name)
    const node = this.nodes.find((n) => n.name === pod?.spec.nodeName)
    const frame = (ch: number, data: Buffer | string) =>
      ws.send(Buffer.concat([Buffer.from([ch]), Buffer.isBuffer(data) ? data : Buffer.from(data)]))
    const finish = (code: number) => {
      const status =
        code === 0
          ? {metadata: {}, status: 'Success'}
          : {
              metadata: {},
              status: 'Failure',
              message: `command terminated with non-zero exit code: error executing command [${command.join(' ')}], exit code ${code}`,
              reason: 'NonZeroExitCode',
              details: {causes: [{reason: 'ExitCode', message: String(code)}]},
            }
      frame(3, JSON.stringify(status))
      ws.close(1000)
    }
    if (!pod || !node) {
      frame(
        3,
        JSON.stringify({
          metadata: {},
          status: 'Failure',
          message: `pod ${ns}/${name} has no node`,
          reason: 'InternalError',
          code: 500,
        }),
      )
      return void ws.close(1000)
    }
    const program = command[0] ?? ''
    if (!program.includes('/') && !existsSync(join(node.tools, program))) {
      // What containerd answers for a program the image does not have.
      frame(
        1,
        `OCI runtime exec failed: exec failed: unable to start container process: exec: "${program}": executable file not found in $PATH: unknown\r\n`,
      )
      return finish(126)
    }
    const child = spawn(
      'ip',
      ['netns', 'exec', node.netns, 'env', '-i', `PATH=${node.tools}`, 'LC_ALL=C', ...command],
      {stdio: ['ignore', 'pipe', 'pipe']},
    )
    child.stdout.on('data', (b: Buffer) => frame(1, b))
    child.stderr.on('data', (b: Buffer) => frame(2, b))
    child.on('close', (code) => finish(code ?? 137))
    ws.on('close', () => child.kill('SIGKILL'))
  }
}

function stripKind(o: Obj): Obj {
  const {kind: _k, apiVersion: _a, ...rest} = o
  return rest
}
