/**
 * The sandbox of `kp verify` (docs/verify.md): four network namespaces kp creates and always
 * deletes. `node` holds the rules under test; `ext` holds clients outside the pod network, `pod`
 * clients inside it, and `sink` takes every forwarded packet and never answers, so each
 * connection's conntrack entry in `node` keeps the kernel's choice. The host's own namespace and
 * rules are never touched.
 */
import {type ChildProcess, spawn, spawnSync} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {existsSync, readdirSync, readlinkSync, statSync} from 'node:fs'
import {createRequire} from 'node:module'
import {mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {nftObjectsFirst, withHooks} from '../../analyze/verify/hooks.js'
import {canonicalIp} from '../../core/address.js'
import {EnvironmentError} from '../../errors.js'
import {runCommand} from '../exec.js'
import type {SandboxAddresses} from '../../analyze/verify/plan.js'
import type {ProbeAnswer, ProbeSpec} from './probe.js'

export type ClientNamespace = 'ext' | 'pod' | 'node'

export type {SandboxAddresses} from '../../analyze/verify/plan.js'

export interface RulesToLoad {
  kind: 'iptables' | 'nft' | 'nft-json'
  /** The ruleset; for iptables the IPv4 dump ('' when the input has only an IPv6 one). */
  text: string
  /** iptables only: the IPv6 dump (ip6tables-save), loaded with ip6tables-restore. */
  text6?: string
  /** iptables only: which iptables-restore loads them. */
  backend?: 'legacy' | 'nft'
}

/** One conntrack entry of the node namespace, original and reply tuples. */
export interface ConntrackEntry {
  protocol: string
  src: string
  sport: number
  dst: string
  dport: number
  replySrc: string
  replySport: number
  replyDst: string
}

const SINK_LINK = ['169.254.199.1', '169.254.199.2'] as const
/**
 * IPv6 next hops: link-local addresses on each link (the node's side, the peer's side). A
 * client's default route goes via the node's link-local address on its own link: Linux answers
 * neighbour solicitations only for addresses of the interface asked on, unlike ARP.
 */
const LINK6 = ['fe80::1', 'fe80::2'] as const

const isV6 = (ip: string) => ip.includes(':')
const hostPrefix = (ip: string) => `${ip}/${isV6(ip) ? 128 : 32}`
/** An IPv6 address is usable at once only without duplicate address detection (else ~2 s tentative). */
const nodad = (ip: string) => (isV6(ip) ? ['nodad'] : [])

/** Whether this kernel has SCTP loaded: its sysctls or its /proc/net entry exist. */
export function kernelHasSctp(): boolean {
  return existsSync('/proc/sys/net/sctp') || existsSync('/proc/net/sctp')
}

function fail(message: string, command: string | null = null, stderr: string | null = null): never {
  throw new EnvironmentError(message, 'LIVE_SANDBOX_FAILED', command, stderr)
}

/** Why a sandbox cannot be built here, or null. */
export function sandboxUnavailable(): string | null {
  if (process.getuid?.() !== 0) return 'kp verify needs root to create network namespaces'
  const why = foreignNamespace()
  if (why !== null) return why
  return null
}

/**
 * Why kp seems to run inside a network namespace it did not create, or null: the namespace kp runs
 * in is a named one (`ip netns add`), or differs from init's where that can be read.
 */
function foreignNamespace(): string | null {
  let self: number
  try {
    self = statSync('/proc/self/ns/net').ino
  } catch {
    return 'cannot read /proc/self/ns/net to check which network namespace kp runs in'
  }
  let named: string[] = []
  try {
    named = readdirSync('/run/netns')
  } catch {
    // no named namespaces
  }
  for (const name of named) {
    try {
      if (statSync(join('/run/netns', name)).ino === self)
        return `kp runs inside the network namespace ${name}, which it did not create; run kp verify in the host namespace`
    } catch {
      // removed meanwhile
    }
  }
  try {
    if (readlinkSync('/proc/1/ns/net') !== readlinkSync('/proc/self/ns/net'))
      return 'kp runs in another network namespace than init; run kp verify in the host namespace'
  } catch {
    // init's namespace is not readable here (a container): the named-namespace check stands
  }
  return null
}

/** The argv that starts kp's probe program, in this build (npm or single executable). */
function probeLauncher(): string[] {
  if (inSingleExecutable()) return [process.execPath, 'probe']
  return [process.execPath, ...process.execArgv, process.argv[1]!, 'probe']
}

/**
 * Required, not imported: a single executable has no dynamic import() (its bundle left one for
 * `node:sea` and every probe failed). node:sea came with Node 20.12; before it there is no kp SEA.
 */
function inSingleExecutable(): boolean {
  try {
    return (createRequire(process.execPath)('node:sea') as {isSea: () => boolean}).isSea()
  } catch {
    return false
  }
}

const live = new Set<Sandbox>()
let handlersInstalled = false

function removeAllSync(): void {
  for (const sb of live) sb.removeSync()
}

function installHandlers(): void {
  if (handlersInstalled) return
  handlersInstalled = true
  process.on('exit', removeAllSync)
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
    process.once(signal, () => {
      removeAllSync()
      process.exit(128 + (signal === 'SIGINT' ? 2 : signal === 'SIGTERM' ? 15 : 1))
    })
}

export class Sandbox {
  readonly names: Record<'node' | 'ext' | 'pod' | 'sink', string>
  private dir = ''
  private removed = false
  private launcher: string[] = []
  private listener: ChildProcess | null = null
  /** The jumps from built-in chains kp added because the dump lacks them. */
  assumedHooks: string[] = []

  private constructor(readonly addresses: SandboxAddresses) {
    const base = `kp-v-${process.pid}-${randomBytes(2).toString('hex')}`
    this.names = {
      node: `${base}-node`,
      ext: `${base}-ext`,
      pod: `${base}-pod`,
      sink: `${base}-sink`,
    }
  }

  /** Builds the four namespaces and their links; removes what it made if a step fails. */
  static async create(addresses: SandboxAddresses): Promise<Sandbox> {
    const why = sandboxUnavailable()
    if (why !== null) fail(why)
    const sb = new Sandbox(addresses)
    live.add(sb)
    installHandlers()
    try {
      await sb.build()
    } catch (e) {
      await sb.remove()
      throw e
    }
    return sb
  }

  private async run(argv: string[], what: string): Promise<string> {
    const r = await runCommand(argv, {timeoutMs: 60_000})
    if (r.failure !== null)
      fail(
        `cannot ${what}: ${r.stderr.trim().split('\n')[0] || r.failure.message}`,
        r.commandLine,
        r.stderr,
      )
    return r.stdout
  }

  private exec(ns: string, argv: string[], what: string): Promise<string> {
    return this.run(['ip', 'netns', 'exec', ns, ...argv], what)
  }

  private async build(): Promise<void> {
    const {node, ext, pod, sink} = this.names
    const a = this.addresses
    const has6 = [...a.nodeIps, ...a.externalIps, ...a.podIps, ...a.hairpinIps].some(isV6)
    this.dir = await mkdtemp(join(tmpdir(), 'kp-verify-'))
    this.launcher = probeLauncher()
    for (const ns of [node, ext, pod, sink]) {
      await this.run(['ip', 'netns', 'add', ns], `create network namespace ${ns}`)
      await this.exec(ns, ['ip', 'link', 'set', 'lo', 'up'], 'bring up lo')
      // Before the links exist, so that their link-local addresses are not tentative either.
      if (has6)
        await this.exec(
          ns,
          [
            'sysctl',
            '-q',
            '-w',
            'net.ipv6.conf.all.accept_dad=0',
            'net.ipv6.conf.default.accept_dad=0',
          ],
          'turn off IPv6 duplicate address detection',
        )
    }
    const link = async (peer: string, nodeSide: string, peerSide: string) => {
      await this.run(
        [
          'ip',
          'link',
          'add',
          nodeSide,
          'netns',
          node,
          'type',
          'veth',
          'peer',
          'name',
          peerSide,
          'netns',
          peer,
        ],
        `link ${node} and ${peer}`,
      )
      await this.exec(node, ['ip', 'link', 'set', nodeSide, 'up'], 'bring up a link')
      await this.exec(peer, ['ip', 'link', 'set', peerSide, 'up'], 'bring up a link')
      if (!has6) return
      await this.exec(
        node,
        ['ip', '-6', 'addr', 'add', `${LINK6[0]}/64`, 'dev', nodeSide, 'nodad'],
        'address a link (IPv6)',
      )
      await this.exec(
        peer,
        ['ip', '-6', 'addr', 'add', `${LINK6[1]}/64`, 'dev', peerSide, 'nodad'],
        'address a link (IPv6)',
      )
    }
    await link(ext, 'ext0', 'eth0')
    await link(pod, a.podInterface, 'eth0')
    await link(sink, 'sink0', 'eth0')
    const sysctls = [
      'net.ipv4.ip_forward=1',
      'net.ipv4.conf.all.route_localnet=1',
      'net.ipv4.conf.all.rp_filter=0',
      'net.ipv4.conf.default.rp_filter=0',
      `net.ipv4.conf.${a.podInterface.replaceAll('.', '/')}.rp_filter=0`,
      'net.ipv4.conf.ext0.rp_filter=0',
      'net.ipv4.conf.sink0.rp_filter=0',
      // Every REJECT must answer: lift the per-namespace ICMP rate limits.
      'net.ipv4.icmp_ratelimit=0',
      'net.ipv4.icmp_msgs_per_sec=1000000',
      'net.ipv4.icmp_msgs_burst=1000000',
      // IPv6 has no rp_filter sysctl and no route_localnet (kube-proxy has no IPv6 localhost NodePorts).
      ...(has6 ? ['net.ipv6.conf.all.forwarding=1', 'net.ipv6.icmp.ratelimit=0'] : []),
    ]
    await this.exec(node, ['sysctl', '-q', '-w', ...sysctls], 'set the node namespace sysctls')
    for (const ns of [ext, pod])
      await this.exec(
        ns,
        ['sysctl', '-q', '-w', 'net.ipv4.conf.all.rp_filter=0', 'net.ipv4.conf.eth0.rp_filter=0'],
        'set client sysctls',
      )
    const nodeIp = a.nodeIps.find((ip) => !isV6(ip))!
    for (const ip of a.nodeIps)
      await this.exec(
        node,
        ['ip', 'addr', 'add', hostPrefix(ip), 'dev', 'ext0', ...nodad(ip)],
        'address the node',
      )
    for (const ip of a.externalIps) {
      await this.exec(
        ext,
        ['ip', 'addr', 'add', hostPrefix(ip), 'dev', 'eth0', ...nodad(ip)],
        'address a client',
      )
      await this.exec(
        node,
        ['ip', 'route', 'add', hostPrefix(ip), 'dev', 'ext0'],
        'route to a client',
      )
    }
    for (const ip of a.podIps) {
      await this.exec(
        pod,
        ['ip', 'addr', 'add', hostPrefix(ip), 'dev', 'eth0', ...nodad(ip)],
        'address a pod client',
      )
      await this.exec(
        node,
        ['ip', 'route', 'add', hostPrefix(ip), 'dev', a.podInterface],
        'route to a pod client',
      )
    }
    for (const ip of a.hairpinIps)
      await this.exec(
        pod,
        ['ip', 'addr', 'add', hostPrefix(ip), 'dev', 'eth0', ...nodad(ip)],
        'address a hairpin client',
      )
    for (const ns of [ext, pod]) {
      await this.exec(
        ns,
        ['ip', 'route', 'add', `${nodeIp}/32`, 'dev', 'eth0'],
        'route a client to the node',
      )
      await this.exec(
        ns,
        ['ip', 'route', 'add', 'default', 'via', nodeIp, 'dev', 'eth0'],
        'route a client to the node',
      )
      if (has6)
        await this.exec(
          ns,
          ['ip', '-6', 'route', 'add', 'default', 'via', LINK6[0], 'dev', 'eth0'],
          'route a client to the node (IPv6)',
        )
    }
    // Everything else leaves the node towards the sink, which has no forwarding and no sockets.
    await this.exec(
      sink,
      ['ip', 'addr', 'add', `${SINK_LINK[1]}/30`, 'dev', 'eth0'],
      'address the sink',
    )
    await this.exec(
      node,
      ['ip', 'addr', 'add', `${SINK_LINK[0]}/30`, 'dev', 'sink0'],
      'address the sink link',
    )
    await this.exec(
      node,
      ['ip', 'route', 'add', 'default', 'via', SINK_LINK[1], 'dev', 'sink0'],
      'route to the sink',
    )
    if (has6)
      await this.exec(
        node,
        ['ip', '-6', 'route', 'add', 'default', 'via', LINK6[1], 'dev', 'sink0'],
        'route to the sink (IPv6)',
      )
  }

  /** Loads the rules into the node namespace; the tool's own error is the message when refused. */
  async load(rules: RulesToLoad): Promise<void> {
    if (rules.kind !== 'iptables') {
      const path = join(this.dir, 'rules.nft')
      await writeFile(path, rules.kind === 'nft' ? nftObjectsFirst(rules.text) : rules.text)
      const json = rules.kind === 'nft-json' ? ['-j'] : []
      await this.exec(this.names.node, ['nft', ...json, '-f', path], 'load the nftables rules')
      return
    }
    // kube-proxy counts with nfacct objects (`-m nfacct`); the restore needs them to exist.
    const both = `${rules.text}\n${rules.text6 ?? ''}`
    for (const name of new Set([...both.matchAll(/--nfacct-name\s+(\S+)/g)].map((m) => m[1]!)))
      await this.exec(this.names.node, ['nfacct', 'add', name], 'create an nfacct counter')
    this.assumedHooks = []
    for (const [text, family] of [
      [rules.text, 'iptables'],
      [rules.text6 ?? '', 'ip6tables'],
    ] as const) {
      if (text.trim() === '') continue
      const hooked = withHooks(text)
      this.assumedHooks.push(
        ...hooked.added.map((h) => (family === 'iptables' ? h : `${family} ${h}`)),
      )
      const file = join(this.dir, `${family}-rules.txt`)
      await writeFile(file, hooked.text)
      const restore =
        rules.backend === undefined ? `${family}-restore` : `${family}-${rules.backend}-restore`
      await this.exec(this.names.node, [restore, file], `load the ${family} rules (${restore})`)
    }
  }

  /** Starts listeners in the node namespace on these TCP and UDP ports; they run until remove(). */
  async listen(ports: number[], udpPorts: number[] = []): Promise<void> {
    if (ports.length === 0 && udpPorts.length === 0) return
    const path = join(this.dir, 'listen.json')
    await writeFile(
      path,
      JSON.stringify({probes: [], waitMs: 0, listen: ports, listenUdp: udpPorts}),
    )
    const child = spawn('ip', ['netns', 'exec', this.names.node, ...this.launcher, path], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    this.listener = child
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('timeout')), 60_000)
      child.stdout?.on('data', (d: Buffer) => {
        if (d.toString().includes('ready')) {
          clearTimeout(timer)
          resolve()
        }
      })
      child.on('exit', () => {
        clearTimeout(timer)
        reject(new Error('exited'))
      })
      child.on('error', reject)
    }).catch((e: Error) => fail(`cannot start the node's listeners: ${e.message}`))
  }

  private stopListener(): void {
    const pid = this.listener?.pid
    this.listener = null
    if (pid === undefined) return
    try {
      process.kill(-pid, 'SIGKILL')
    } catch {
      // gone already
    }
  }

  /** Runs probes from one client namespace; their conntrack entries stay in the node namespace. */
  async probe(from: ClientNamespace, probes: ProbeSpec[], waitMs: number): Promise<ProbeAnswer[]> {
    if (probes.length === 0) return []
    const path = join(this.dir, `probes-${from}.json`)
    await writeFile(path, JSON.stringify({probes, waitMs}))
    const out = await this.exec(this.names[from], [...this.launcher, path], 'run the probes')
    try {
      return JSON.parse(out) as ProbeAnswer[]
    } catch {
      return fail(`the probe program printed no answer: ${out.slice(0, 200)}`)
    }
  }

  /** The node namespace's conntrack table. */
  async conntrack(): Promise<ConntrackEntry[]> {
    const text = await this.exec(
      this.names.node,
      ['cat', '/proc/net/nf_conntrack'],
      'read conntrack',
    )
    return parseConntrack(text)
  }

  /** Empties the node namespace's conntrack table between rounds of probes. */
  async flushConntrack(): Promise<void> {
    await this.exec(this.names.node, ['conntrack', '-F'], 'flush conntrack')
  }

  async remove(): Promise<void> {
    if (this.removed) return
    this.removed = true
    live.delete(this)
    this.stopListener()
    for (const ns of Object.values(this.names)) await runCommand(['ip', 'netns', 'del', ns])
    if (this.dir !== '') await rm(this.dir, {recursive: true, force: true})
  }

  /** On a signal or at exit: no awaiting there. */
  removeSync(): void {
    if (this.removed) return
    this.removed = true
    live.delete(this)
    for (const ns of Object.values(this.names))
      spawnSync('ip', ['netns', 'del', ns], {stdio: 'ignore'})
    if (this.dir !== '') spawnSync('rm', ['-rf', this.dir], {stdio: 'ignore'})
  }
}

/** `/proc/net/nf_conntrack` lines: the first src/dst/sport/dport are the original tuple, the second the reply. */
export function parseConntrack(text: string): ConntrackEntry[] {
  const out: ConntrackEntry[] = []
  for (const line of text.split('\n')) {
    const words = line.trim().split(/\s+/)
    if (words.length < 8) continue
    const values = (key: string) =>
      words.filter((w) => w.startsWith(`${key}=`)).map((w) => w.slice(key.length + 1))
    const [src, replySrc] = values('src')
    const [dst, replyDst] = values('dst')
    const [sport, replySport] = values('sport')
    const [dport] = values('dport')
    if (!src || !dst || !replySrc || !replyDst || !sport || !dport || !replySport) continue
    // IPv6 addresses come uncompressed (2001:0002:0000:…): compared in their canonical spelling.
    const c = (ip: string) => canonicalIp(ip) ?? ip
    out.push({
      protocol: words[2]!,
      src: c(src),
      sport: Number(sport),
      dst: c(dst),
      dport: Number(dport),
      replySrc: c(replySrc),
      replySport: Number(replySport),
      replyDst: c(replyDst),
    })
  }
  return out
}
