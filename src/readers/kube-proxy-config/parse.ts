/**
 * kube-proxy's own configuration, in the three forms an operator has at hand: the kubeadm
 * ConfigMap (`kubectl -n kube-system get configmap kube-proxy -o yaml`, the configuration in its
 * `config.conf` key), a KubeProxyConfiguration file (kube-proxy --config), or the kube-proxy
 * command line (flags, as `ps` or a systemd unit shows them). The fields kp reads are those of
 * kubeproxy.config.k8s.io/v1alpha1 that change rules or findings (docs/model.md
 * "KubeProxyConfig"). Never throws: what it cannot read is a KPCONF_ diagnostic.
 */
import {LineCounter, Scalar, isMap, isScalar, isSeq, parseDocument} from 'yaml'
import type {Node as YamlNode, YAMLMap} from 'yaml'
import {diag} from '../../core/state.js'
import type {DiagnosticCode} from '../../catalog/diagnostics.js'
import type {Diagnostic, KubeProxyConfig, LocalDetector, SourceRef} from '../../model/types.js'

export interface KubeProxyConfigRead {
  /** null when nothing could be read (an error diagnostic says why). */
  config: KubeProxyConfig | null
  diagnostics: Diagnostic[]
}

/** detectLocalMode / --detect-local-mode -> kp's detector names (pkg/proxy/apis/config LocalMode). */
const DETECTORS: Record<string, LocalDetector> = {
  ClusterCIDR: 'cidr',
  NodeCIDR: 'cidr',
  BridgeInterface: 'interface',
  InterfaceNamePrefix: 'interface-prefix',
}

function emptyConfig(form: KubeProxyConfig['form']): KubeProxyConfig {
  return {
    kind: 'KubeProxyConfig',
    form,
    mode: null,
    detectLocalMode: null,
    nodePortAddresses: null,
    localDetector: null,
    localInterface: null,
    clusterCIDRs: null,
    masqueradeBit: null,
    masqueradeAll: null,
    localhostNodePorts: null,
    conntrackTcpBeLiberal: null,
    ipvsScheduler: null,
    ipvsStrictARP: null,
    ipvsExcludeCIDRs: null,
    featureGates: {},
    at: {},
  }
}

/** Reads `text` (from `path`) in whichever of the three forms it is. */
export function parseKubeProxyConfig(text: string, path: string): KubeProxyConfigRead {
  const firstWord = /^\s*(\S+)/.exec(text.replace(/^(\s*#.*\n)*/, ''))?.[1] ?? ''
  if (firstWord.startsWith('--') || /(^|\/)kube-proxy$/.test(firstWord))
    return new FlagsReader(text, path).read()
  return new YamlConfigReader(text, path).read()
}

// ---- YAML: the ConfigMap or a KubeProxyConfiguration file ------------------------------------

class YamlConfigReader {
  private readonly diagnostics: Diagnostic[] = []
  private config = emptyConfig('file')
  /** Added to a line of the configuration text: where that text starts in the file. */
  private lineOffset = 0
  private counter = new LineCounter()

  constructor(
    private readonly text: string,
    private readonly path: string,
  ) {}

  read(): KubeProxyConfigRead {
    const root = this.parse(this.text, 0)
    if (root === null) return this.done(null)
    const kind = this.scalar(root.get('kind', true))
    if (kind === 'ConfigMap') return this.readConfigMap(root)
    if (kind === 'KubeProxyConfiguration') {
      this.readConfiguration(root)
      return this.done(this.config)
    }
    return this.notConfig(root, kind)
  }

  private readConfigMap(root: YAMLMap): KubeProxyConfigRead {
    this.config = emptyConfig('configmap')
    const data = root.get('data', true)
    const conf = isMap(data) ? data.get('config.conf', true) : undefined
    if (!isScalar(conf) || typeof conf.value !== 'string')
      return this.notConfig(root, 'ConfigMap without a config.conf key')
    // A block scalar's text starts on the line after its `|` indicator.
    const start = this.lineOf(conf) + (conf.type === Scalar.BLOCK_LITERAL ? 1 : 0)
    this.counter = new LineCounter()
    const inner = this.parse(conf.value, start - 1)
    if (inner === null) return this.done(null)
    this.readConfiguration(inner)
    return this.done(this.config)
  }

  private notConfig(root: YAMLMap, kind: string | null): KubeProxyConfigRead {
    this.report(
      'error',
      'KPCONF_NOT_CONFIG',
      `not a KubeProxyConfiguration, a kube-proxy ConfigMap or kube-proxy flags (kind: ${kind ?? 'none'})`,
      this.lineOf(root),
    )
    return this.done(null)
  }

  private parse(text: string, offset: number): YAMLMap | null {
    this.lineOffset = offset
    const doc = parseDocument(text, {lineCounter: this.counter, prettyErrors: false})
    const error = doc.errors[0]
    if (error) {
      const line = this.counter.linePos(error.pos[0]).line
      this.report('error', 'KPCONF_BAD_YAML', error.message.split('\n')[0]!, line)
      return null
    }
    if (!isMap(doc.contents)) {
      this.report('error', 'KPCONF_NOT_CONFIG', 'the configuration is not a YAML mapping', 1)
      return null
    }
    return doc.contents
  }

  /** The fields of a KubeProxyConfiguration mapping. */
  private readConfiguration(c: YAMLMap): void {
    const mode = this.string(c, ['mode'], 'mode')
    // Each mode has its own masqueradeBit and masqueradeAll; kube-proxy reads the running mode's.
    const section = mode === 'nftables' ? 'nftables' : 'iptables'
    this.config.detectLocalMode = this.string(
      c,
      ['detectLocalMode'],
      'localDetector',
      (v) => DETECTORS[v] ?? null,
    )
    this.string(c, ['detectLocal', 'bridgeInterface'], 'localInterface')
    this.string(c, ['detectLocal', 'interfaceNamePrefix'], 'localInterface')
    this.string(c, ['clusterCIDR'], 'clusterCIDRs', splitList)
    this.list(c, ['nodePortAddresses'], 'nodePortAddresses')
    this.bit(c, [section, 'masqueradeBit'])
    this.bool(c, ['masqueradeAll'], 'masqueradeAll')
    this.bool(c, ['linux', 'masqueradeAll'], 'masqueradeAll')
    this.bool(c, [section, 'masqueradeAll'], 'masqueradeAll')
    this.bool(c, ['iptables', 'localhostNodePorts'], 'localhostNodePorts')
    this.bool(c, ['conntrack', 'tcpBeLiberal'], 'conntrackTcpBeLiberal')
    this.bool(c, ['linux', 'conntrack', 'tcpBeLiberal'], 'conntrackTcpBeLiberal')
    this.string(c, ['ipvs', 'scheduler'], 'ipvsScheduler')
    this.bool(c, ['ipvs', 'strictARP'], 'ipvsStrictARP')
    this.list(c, ['ipvs', 'excludeCIDRs'], 'ipvsExcludeCIDRs')
    const gates = c.getIn(['featureGates'], true) as YamlNode | undefined
    if (isMap(gates)) {
      for (const item of gates.items) {
        const name = isScalar(item.key) ? String(item.key.value) : null
        if (name !== null && isScalar(item.value) && typeof item.value.value === 'boolean')
          this.config.featureGates[name] = item.value.value
        else this.bad('featureGates', 'a map of gate names to true or false', item.key as YamlNode)
      }
    }
  }

  private string<K extends keyof KubeProxyConfig>(
    c: YAMLMap,
    path: string[],
    field: K,
    convert: (v: string) => KubeProxyConfig[K] | null = (v) => v as KubeProxyConfig[K],
  ): string | null {
    const node = c.getIn(path, true) as YamlNode | undefined
    if (node === undefined || (isScalar(node) && node.value === null)) return null
    if (!isScalar(node) || typeof node.value !== 'string') {
      this.bad(path.join('.'), 'a string', node)
      return null
    }
    // "" is what kubeadm writes for an unset string: kube-proxy's default applies.
    if (node.value === '' && field !== 'mode') return null
    const value = convert(node.value)
    if (value === null) {
      this.bad(path.join('.'), 'one of its documented values', node)
      return null
    }
    this.set(field, value, node)
    return node.value
  }

  private list(c: YAMLMap, path: string[], field: 'nodePortAddresses' | 'ipvsExcludeCIDRs'): void {
    const node = c.getIn(path, true) as YamlNode | undefined
    if (node === undefined || (isScalar(node) && node.value === null)) return
    if (!isSeq(node) || !node.items.every((i) => isScalar(i) && typeof i.value === 'string')) {
      this.bad(path.join('.'), 'a list of strings', node)
      return
    }
    this.set(
      field,
      node.items.map((i) => String((i as {value: unknown}).value)),
      node,
    )
  }

  private bool(
    c: YAMLMap,
    path: string[],
    field: 'masqueradeAll' | 'localhostNodePorts' | 'conntrackTcpBeLiberal' | 'ipvsStrictARP',
  ): void {
    const node = c.getIn(path, true) as YamlNode | undefined
    if (node === undefined || (isScalar(node) && node.value === null)) return
    if (!isScalar(node) || typeof node.value !== 'boolean') {
      this.bad(path.join('.'), 'true or false', node)
      return
    }
    this.set(field, node.value, node)
  }

  private bit(c: YAMLMap, path: string[]): void {
    const node = c.getIn(path, true) as YamlNode | undefined
    if (node === undefined || (isScalar(node) && node.value === null)) return
    const v = isScalar(node) ? node.value : undefined
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 31) {
      this.bad(path.join('.'), 'a bit number from 0 to 31', node)
      return
    }
    this.set('masqueradeBit', v, node)
  }

  private set<K extends keyof KubeProxyConfig>(
    field: K,
    value: KubeProxyConfig[K],
    node: YamlNode,
  ): void {
    this.config[field] = value
    this.config.at[field] = this.ref(this.lineOf(node))
  }

  private bad(field: string, expected: string, node: YamlNode | undefined): void {
    this.report(
      'warning',
      'KPCONF_BAD_FIELD',
      `${field} is not ${expected}; kp treats it as unknown`,
      node ? this.lineOf(node) : 1,
    )
  }

  private scalar(node: unknown): string | null {
    return isScalar(node) && typeof node.value === 'string' ? node.value : null
  }

  private lineOf(node: YamlNode): number {
    return this.counter.linePos(node.range?.[0] ?? 0).line
  }

  private ref(line: number): SourceRef {
    return {path: this.path, line: line + this.lineOffset}
  }

  private report(
    severity: Diagnostic['severity'],
    code: DiagnosticCode,
    message: string,
    line: number,
  ): void {
    this.diagnostics.push(diag(severity, code, message, this.ref(line)))
  }

  private done(config: KubeProxyConfig | null): KubeProxyConfigRead {
    return {config, diagnostics: this.diagnostics}
  }
}

// ---- the kube-proxy command line --------------------------------------------------------------

/** A flag's value read into a field; null when the value is not of its kind. */
type FlagReading = (c: KubeProxyConfig, value: string) => boolean

const boolFlag =
  (field: 'masqueradeAll' | 'localhostNodePorts' | 'conntrackTcpBeLiberal' | 'ipvsStrictARP') =>
  (c: KubeProxyConfig, v: string): boolean => {
    if (v !== 'true' && v !== 'false') return false
    c[field] = v === 'true'
    return true
  }

const stringFlag =
  (field: 'mode' | 'localInterface' | 'ipvsScheduler') =>
  (c: KubeProxyConfig, v: string): boolean => {
    c[field] = v
    return true
  }

const listFlag =
  (field: 'nodePortAddresses' | 'clusterCIDRs' | 'ipvsExcludeCIDRs') =>
  (c: KubeProxyConfig, v: string): boolean => {
    c[field] = splitList(v)
    return true
  }

/** The kube-proxy flags kp reads (`kube-proxy --help`), by name. */
const FLAGS: Record<string, {field: keyof KubeProxyConfig; read: FlagReading; boolean?: true}> = {
  'proxy-mode': {field: 'mode', read: stringFlag('mode')},
  'nodeport-addresses': {
    field: 'nodePortAddresses',
    read: listFlag('nodePortAddresses'),
  },
  'detect-local-mode': {
    field: 'localDetector',
    read: (c, v) => {
      if (!DETECTORS[v]) return false
      c.localDetector = DETECTORS[v]
      c.detectLocalMode = v
      return true
    },
  },
  'pod-bridge-interface': {field: 'localInterface', read: stringFlag('localInterface')},
  'pod-interface-name-prefix': {field: 'localInterface', read: stringFlag('localInterface')},
  'cluster-cidr': {field: 'clusterCIDRs', read: listFlag('clusterCIDRs')},
  'iptables-masquerade-bit': {
    field: 'masqueradeBit',
    read: (c, v) => {
      const n = /^\d+$/.test(v) ? Number(v) : -1
      if (n < 0 || n > 31) return false
      c.masqueradeBit = n
      return true
    },
  },
  'masquerade-all': {field: 'masqueradeAll', read: boolFlag('masqueradeAll'), boolean: true},
  'iptables-localhost-nodeports': {
    field: 'localhostNodePorts',
    read: boolFlag('localhostNodePorts'),
    boolean: true,
  },
  'conntrack-tcp-be-liberal': {
    field: 'conntrackTcpBeLiberal',
    read: boolFlag('conntrackTcpBeLiberal'),
    boolean: true,
  },
  'ipvs-scheduler': {field: 'ipvsScheduler', read: stringFlag('ipvsScheduler')},
  'ipvs-strict-arp': {field: 'ipvsStrictARP', read: boolFlag('ipvsStrictARP'), boolean: true},
  'ipvs-exclude-cidrs': {
    field: 'ipvsExcludeCIDRs',
    read: listFlag('ipvsExcludeCIDRs'),
  },
  'feature-gates': {
    field: 'featureGates',
    read: (c, v) => {
      for (const pair of splitList(v)) {
        const m = /^([A-Za-z0-9]+)=(true|false)$/.exec(pair)
        if (!m) return false
        c.featureGates[m[1]!] = m[2] === 'true'
      }
      return true
    },
  },
}

class FlagsReader {
  private readonly diagnostics: Diagnostic[] = []
  private readonly config = emptyConfig('flags')

  constructor(
    private readonly text: string,
    private readonly path: string,
  ) {}

  read(): KubeProxyConfigRead {
    const words = this.words()
    for (let i = 0; i < words.length; i++) {
      const {word, line} = words[i]!
      const m = /^--?([a-z0-9-]+)(?:=(.*))?$/.exec(word)
      if (!m) continue // the program name, or a value read with its flag
      const name = m[1]!
      if (name === 'config') {
        this.report(
          'warning',
          'KPCONF_CONFIG_FILE',
          `kube-proxy reads its settings from --config ${m[2] ?? words[i + 1]?.word ?? ''}`,
          line,
        )
        continue
      }
      const flag = FLAGS[name]
      if (!flag) continue // a flag that changes nothing kp checks
      let value = m[2]
      if (value === undefined) {
        const next = words[i + 1]?.word
        if (flag.boolean && (next === undefined || !/^(true|false)$/.test(next))) value = 'true'
        else if (next !== undefined && !next.startsWith('--')) {
          value = next
          i++
        } else value = ''
      }
      if (flag.read(this.config, value)) this.config.at[flag.field] = {path: this.path, line}
      else
        this.report(
          'warning',
          'KPCONF_BAD_FIELD',
          `--${name} ${JSON.stringify(value)} is not a value kube-proxy takes; kp treats it as unknown`,
          line,
        )
    }
    return {config: this.config, diagnostics: this.diagnostics}
  }

  /** The words of the command line with their lines: shell quotes removed, `\` continuations joined. */
  private words(): Array<{word: string; line: number}> {
    const out: Array<{word: string; line: number}> = []
    const lines = this.text.split('\n')
    for (let n = 0; n < lines.length; n++) {
      const line = lines[n]!.replace(/\\\s*$/, '')
      if (/^\s*#/.test(line)) continue
      for (const m of line.matchAll(/(?:[^\s"']+|"[^"]*"|'[^']*')+/g))
        out.push({word: m[0].replace(/["']/g, ''), line: n + 1})
    }
    return out
  }

  private report(
    severity: Diagnostic['severity'],
    code: DiagnosticCode,
    message: string,
    line: number,
  ): void {
    this.diagnostics.push(diag(severity, code, message, {path: this.path, line}))
  }
}

function splitList(v: string): string[] {
  return v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
}
