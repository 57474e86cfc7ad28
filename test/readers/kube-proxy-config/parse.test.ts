import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {parseKubeProxyConfig} from '../../../src/readers/kube-proxy-config/parse.js'
import {renderOptionsFromConfig} from '../../../src/render/config-options.js'
import {ROOT} from '../../helpers/run-cli.js'

const DIR = join(ROOT, 'fixtures/kube-proxy-config')
const read = (name: string) => parseKubeProxyConfig(readFileSync(join(DIR, name), 'utf8'), name)

/** The 1-based line of the first line of `file` that contains `text`. */
const lineOf = (file: string, text: string) =>
  readFileSync(join(DIR, file), 'utf8')
    .split('\n')
    .findIndex((l) => l.includes(text)) + 1

describe('the kubeadm ConfigMap', () => {
  const r = read('configmap-kubeadm.yaml')

  it('reads config.conf, with lines of the ConfigMap file', () => {
    expect(r.diagnostics).toEqual([])
    const c = r.config!
    expect(c.form).toBe('configmap')
    expect(c.mode).toBe('')
    expect(c.at.mode).toEqual({
      path: 'configmap-kubeadm.yaml',
      line: lineOf('configmap-kubeadm.yaml', 'mode: ""'),
    })
    expect(c.clusterCIDRs).toEqual(['10.244.0.0/16'])
    expect(c.at.clusterCIDRs?.line).toBe(lineOf('configmap-kubeadm.yaml', 'clusterCIDR:'))
  })

  it('leaves what kubeadm writes as unset ("", null) unset', () => {
    const c = r.config!
    expect(c.nodePortAddresses).toBeNull()
    expect(c.localDetector).toBeNull()
    expect(c.masqueradeBit).toBeNull()
    expect(c.localhostNodePorts).toBeNull()
    expect(c.ipvsScheduler).toBeNull()
    expect(c.masqueradeAll).toBe(false)
  })
})

describe('a KubeProxyConfiguration file', () => {
  it("reads the running mode's masquerade settings, the detector, the lists and the gates", () => {
    const {config: c, diagnostics} = read('config-nftables.yaml')
    expect(diagnostics).toEqual([])
    expect(c).toMatchObject({
      form: 'file',
      mode: 'nftables',
      clusterCIDRs: ['10.244.0.0/16', 'fd00:10:244::/56'],
      localDetector: 'cidr',
      nodePortAddresses: ['primary', 'localhost'],
      masqueradeBit: 15,
      masqueradeAll: true,
      conntrackTcpBeLiberal: true,
      featureGates: {KubeProxyNFTablesLocalhostNodePorts: true},
    })
  })

  it('turns into render options: the mark from the bit, no INVALID drop when liberal', () => {
    expect(renderOptionsFromConfig(read('config-nftables.yaml').config!)).toEqual({
      localDetector: 'cidr',
      podCIDRs: ['10.244.0.0/16', 'fd00:10:244::/56'],
      nodePortAddresses: ['primary', 'localhost'],
      masqueradeMark: '0x8000',
      masqueradeAll: true,
      conntrackInvalidDrop: false,
    })
  })
})

describe('a kube-proxy command line', () => {
  it('reads --flag=value, --flag value and bare booleans across continuation lines', () => {
    const {config: c, diagnostics} = read('flags.txt')
    expect(diagnostics).toEqual([])
    expect(c).toMatchObject({
      form: 'flags',
      mode: 'ipvs',
      ipvsScheduler: 'lc',
      ipvsStrictARP: true,
      clusterCIDRs: ['10.42.0.0/16'],
      localDetector: 'interface-prefix',
      localInterface: 'veth',
      masqueradeBit: 14,
      nodePortAddresses: ['192.168.1.0/24'],
      featureGates: {KubeProxyIPVS: true},
    })
    expect(c!.at.ipvsScheduler).toEqual({path: 'flags.txt', line: 3})
    expect(renderOptionsFromConfig(c!).masqueradeMark).toBe('0x4000')
  })

  it('warns about a bad value and about --config, whose file kp has not read', () => {
    const r = parseKubeProxyConfig(
      'kube-proxy --config=/var/lib/kube-proxy/config.conf --iptables-masquerade-bit=40',
      'cmd',
    )
    expect(r.diagnostics.map((d) => [d.code, d.severity])).toEqual([
      ['KPCONF_CONFIG_FILE', 'warning'],
      ['KPCONF_BAD_FIELD', 'warning'],
    ])
    expect(r.config!.masqueradeBit).toBeNull()
  })
})

describe('what is not a configuration', () => {
  it('bad YAML is an error at its line', () => {
    const r = parseKubeProxyConfig('kind: KubeProxyConfiguration\nmode: [nftables\n', 'bad.yaml')
    expect(r.config).toBeNull()
    expect(r.diagnostics[0]).toMatchObject({severity: 'error', code: 'KPCONF_BAD_YAML'})
  })

  it('another kind, or a ConfigMap without config.conf, is KPCONF_NOT_CONFIG', () => {
    for (const text of [
      'apiVersion: v1\nkind: Service\nmetadata: {name: x}\n',
      'kind: ConfigMap\ndata:\n  other: x\n',
    ]) {
      const r = parseKubeProxyConfig(text, 'x.yaml')
      expect(r.config).toBeNull()
      expect(r.diagnostics.map((d) => d.code)).toEqual(['KPCONF_NOT_CONFIG'])
    }
  })

  it('a field of the wrong kind is a warning, and the setting stays unknown', () => {
    const r = parseKubeProxyConfig(
      'kind: KubeProxyConfiguration\nmode: nftables\nnodePortAddresses: 10.0.0.0/8\niptables:\n  masqueradeBit: "14"\n',
      'c.yaml',
    )
    expect(r.diagnostics.map((d) => [d.code, d.source?.line])).toEqual([['KPCONF_BAD_FIELD', 3]])
    expect(r.config!.nodePortAddresses).toBeNull()
  })
})

describe('detectLocalMode NodeCIDR', () => {
  it("is the cidr detector over the node's own pod CIDRs: clusterCIDR is not rendered as them", () => {
    const r = parseKubeProxyConfig(
      'kind: KubeProxyConfiguration\nclusterCIDR: 10.244.0.0/16\ndetectLocalMode: NodeCIDR\n',
      'c.yaml',
    )
    expect(r.config).toMatchObject({detectLocalMode: 'NodeCIDR', localDetector: 'cidr'})
    expect(renderOptionsFromConfig(r.config!).podCIDRs).toBeUndefined()
    const flags = parseKubeProxyConfig(
      'kube-proxy --detect-local-mode NodeCIDR --cluster-cidr 10.244.0.0/16',
      'f',
    )
    expect(renderOptionsFromConfig(flags.config!).podCIDRs).toBeUndefined()
  })
})
