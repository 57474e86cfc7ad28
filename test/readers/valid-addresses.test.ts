/**
 * The last check of a state read from dumps (src/readers/valid-addresses.ts): whatever a reader
 * took for an address must be one, so `kp list --json` output can always be read back and no
 * renderer writes a damaged value into rules. The damaged lines below are the shapes found by
 * mutating the fixtures and reading each state back as a saved state.
 */
import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {emptyState} from '../../src/core/state.js'
import type {ProxyState} from '../../src/model/types.js'
import {readState} from '../../src/readers/read-state.js'
import {dropInvalidAddresses, locateIn} from '../../src/readers/valid-addresses.js'

const read = (path: string, text: string): Promise<ProxyState> =>
  readState({sources: [{path, text}]})
const lineOf = (text: string, needle: string): number =>
  text.split('\n').findIndex((l) => l.includes(needle)) + 1

/** The state written as kp list --json writes it, read back: the saved-state reader's errors. */
async function savedStateErrors(state: ProxyState): Promise<string[]> {
  const back = await read('saved.json', JSON.stringify(state))
  return back.diagnostics.filter((d) => d.code.startsWith('KPJSON')).map((d) => d.message)
}

describe('damaged addresses in dumps', () => {
  const ipt = readFileSync('fixtures/iptables/upstream-multipleservices-older/input.rules', 'utf8')
  const nft = readFileSync('fixtures/nft/upstream-syncrepeated-stalechains/list-a.nft', 'utf8')
  it.each([
    [
      'an iptables DNAT to "10.180.0.3::80"',
      'a.rules',
      ipt,
      '--to-destination 10.180.0.3:80',
      '--to-destination 10.180.0.3::80',
      'endpoint "10.180.0.3::80"',
    ],
    [
      'an iptables source range "COMMIT"',
      'a.rules',
      ipt,
      '-s 203.0.113.0/25 ',
      '-s COMMIT ',
      'source range "COMMIT/32" is not a CIDR',
    ],
    [
      'an nft set element with a word before it',
      'a.nft',
      nft,
      '172.30.0.43 . tcp . 80 : goto',
      '172 172.30.0.43 . tcp . 80 : goto',
      '"172 172.30.0.43" is not an IP address',
    ],
  ])(
    '%s: an error at its line, the value left out, the state readable back',
    async (_, path, text, from, to, said) => {
      expect(text).toContain(from)
      const damaged = text.replace(from, to)
      const state = await read(path, damaged)
      const errors = state.diagnostics.filter((d) => d.code === 'INPUT_BAD_ADDRESS')
      expect(errors.map((d) => d.message).join('\n')).toContain(said)
      expect(errors[0]!.severity).toBe('error')
      expect(errors[0]!.source).toEqual({path, line: lineOf(damaged, to.trim())})
      expect(await savedStateErrors(state)).toEqual([])
    },
  )
})

describe('dropInvalidAddresses', () => {
  it('leaves a good state alone and keeps what is good in a bad one', () => {
    const s = emptyState('iptables')
    s.node.podCIDRs = ['10.0.0.0/8', 'jump/32', 'fd00::/64']
    s.node.nodePortAddresses = ['192.168.1.10', '10.0.0.0/33']
    s.services = [
      {
        namespace: 'ns',
        name: 'a',
        portName: 'http',
        protocol: 'TCP',
        family: 'IPv4',
        healthCheckNodePort: 70000,
        internalTrafficPolicy: null,
        externalTrafficPolicy: null,
        sessionAffinity: null,
        scheduler: null,
        rules: [{path: 'a.rules', line: 7}],
        frontends: [
          {type: 'ClusterIP', ip: '10.96.0.1', port: 80, sourceRanges: [], action: 'forward'},
          {
            type: 'LoadBalancer',
            ip: '5.6.7.8',
            port: 80,
            sourceRanges: ['203.0.113.0/24', 'x'],
            action: 'forward',
          },
          {type: 'ExternalIP', ip: '}', port: 80, sourceRanges: [], action: 'forward'},
          {type: 'NodePort', ip: null, port: 30080, sourceRanges: [], action: 'forward'},
        ],
        endpoints: [
          {ip: '10.1.0.1', port: 8080, local: null, share: 0.5, weight: null, state: null},
          {ip: '*filter', port: null, local: null, share: 0.5, weight: null, state: null},
          {ip: 'fe80::1%eth0', port: 8080, local: null, share: 0, weight: null, state: null},
        ],
      },
    ]
    const locate = locateIn([{path: 'a.rules', text: 'one\ntwo jump three\n'}])
    const said = dropInvalidAddresses(s, locate)
    expect(said.map((d) => [d.message, d.source?.line])).toEqual([
      ['pod CIDR "jump/32" is not a CIDR; left out', 2],
      ['nodePortAddresses entry "10.0.0.0/33" is not an address or CIDR; left out', 1],
      [
        'ns/a:http/tcp: LoadBalancer 5.6.7.8:80 source range "x" is not a CIDR, so who may connect is not known; left out',
        1,
      ],
      ['ns/a:http/tcp: ExternalIP address "}" is not an IP address; left out', 1],
      ['ns/a:http/tcp: health check NodePort 70000 is not a port; left out', 1],
      ['ns/a:http/tcp: endpoint "*filter" is not an IP address and port; left out', 1],
    ])
    expect(s.node.podCIDRs).toEqual(['10.0.0.0/8', 'fd00::/64'])
    expect(s.node.nodePortAddresses).toEqual(['192.168.1.10'])
    expect(s.services[0]!.frontends.map((f) => f.type)).toEqual(['ClusterIP', 'NodePort'])
    expect(s.services[0]!.endpoints.map((e) => e.ip)).toEqual(['10.1.0.1', 'fe80::1%eth0'])
    expect(s.services[0]!.healthCheckNodePort).toBeNull()
    expect(dropInvalidAddresses(s, locate)).toEqual([])
  })
})
