/**
 * The probe program of `kp verify`: run inside a client namespace of the sandbox (`kp probe SPEC`,
 * a hidden command, so it works in the npm build and in the single executable alike). Each probe
 * is one new connection from its own source address and port; what the kernel did with it is read
 * afterwards from conntrack, so this only records what the client saw.
 */
import {createSocket} from 'node:dgram'
import {connect, createServer, type Socket} from 'node:net'

export interface ProbeSpec {
  id: number
  protocol: 'TCP' | 'UDP'
  source: string
  sourcePort: number
  destination: string
  port: number
  /** Wait up to PATIENT_MS for this one's answer (ProbeGroup.patient: a refusal on the SYN's resend). */
  patient?: boolean
}

/** What the client saw: connected, an errno (ECONNREFUSED, EHOSTUNREACH, EPERM), or nothing. */
export type ClientSaw = 'connected' | 'sent' | 'timeout' | string

export interface ProbeAnswer {
  id: number
  saw: ClientSaw
}

/** Sockets open at once; each wave waits `waitMs` for answers, then closes its sockets. */
const WAVE = 1000
/** Past the SYN's first retransmission (1 s), for patient probes. */
const PATIENT_MS = 1500

export async function runProbes(probes: ProbeSpec[], waitMs: number): Promise<ProbeAnswer[]> {
  const out: ProbeAnswer[] = []
  for (let i = 0; i < probes.length; i += WAVE)
    out.push(...(await wave(probes.slice(i, i + WAVE), waitMs)))
  return out
}

async function wave(probes: ProbeSpec[], waitMs: number): Promise<ProbeAnswer[]> {
  const answers = new Map<number, ClientSaw>()
  const closers: Array<() => void> = []
  for (const p of probes) {
    if (p.protocol === 'TCP') {
      const s = connect({
        host: p.destination,
        port: p.port,
        localAddress: p.source,
        localPort: p.sourcePort,
      })
      s.on('connect', () => answers.set(p.id, 'connected'))
      s.on('error', (e: NodeJS.ErrnoException) => answers.set(p.id, e.code ?? 'error'))
      closers.push(() => s.destroy())
    } else {
      const s = createSocket(p.source.includes(':') ? 'udp6' : 'udp4')
      s.on('error', (e: NodeJS.ErrnoException) => answers.set(p.id, e.code ?? 'error'))
      s.bind({address: p.source, port: p.sourcePort}, () => {
        s.connect(p.port, p.destination, () => {
          s.send(Buffer.from('kp-verify'), (err) => {
            const code = (err as NodeJS.ErrnoException | null)?.code
            if (!answers.has(p.id)) answers.set(p.id, code ?? 'sent')
          })
        })
      })
      closers.push(() => s.close())
    }
  }
  // Under load the answers of a large wave come in late: wait until they stop coming (≤ 3 s more).
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
  await sleep(waitMs)
  for (let extra = 0, seen = -1; extra < 30 && seen !== answers.size; extra++) {
    seen = answers.size
    await sleep(100)
  }
  const patient = probes.filter((p) => p.patient === true)
  for (
    let waited = 0;
    waited < PATIENT_MS && patient.some((p) => !answers.has(p.id));
    waited += 100
  )
    await sleep(100)
  const out = probes.map((p) => ({id: p.id, saw: answers.get(p.id) ?? 'timeout'}))
  // A TCP socket still in SYN-SENT closes without sending anything: its conntrack entry stays.
  for (const close of closers) close()
  return out
}

/**
 * Listeners on the node's ports: a connection that reaches the node itself without DNAT is then
 * accepted and keeps its conntrack entry, so a refusal can only come from a rule (a refused SYN's
 * entry is gone by the time conntrack is read). UDP sockets bound likewise: a datagram to a
 * closed port would be answered with the same ICMP error as a REJECT.
 */
export async function listen(ports: number[], udpPorts: number[] = []): Promise<void> {
  await Promise.all(
    udpPorts.map(
      (port) =>
        new Promise<void>((resolve) => {
          const s = createSocket('udp4')
          s.on('error', () => resolve())
          s.on('message', () => undefined)
          s.bind({port, address: '0.0.0.0'}, () => resolve())
        }),
    ),
  )
  const held: Socket[] = []
  // Each family apart: a kernel without IPv6 refuses '::', and IPv4 must be served all the same.
  await Promise.all(
    ports
      .flatMap((port) => ['0.0.0.0', '::'].map((host) => ({port, host})))
      .map(
        ({port, host}) =>
          new Promise<void>((resolve) => {
            const server = createServer((s) => {
              held.push(s)
              s.on('error', () => undefined)
            })
            server.on('error', () => resolve())
            server.listen({port, host, backlog: 4096, ipv6Only: host === '::'}, () => resolve())
          }),
      ),
  )
}
