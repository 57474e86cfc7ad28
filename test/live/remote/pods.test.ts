/** Which container of a pod runs kube-proxy (distributions differ), and the batched file read's format. */
import {describe, expect, it} from 'vitest'
import {kubeProxyContainer} from '../../../src/live/remote/cluster.js'
import {parseFileDump} from '../../../src/live/remote/read-node.js'

const pod = (
  ...containers: Array<{name: string; image?: string; command?: string[]; args?: string[]}>
) => ({
  spec: {containers},
})

describe('kubeProxyContainer', () => {
  it('finds kube-proxy by what the container runs, whatever the labels', () => {
    // kubeadm's DaemonSet
    expect(
      kubeProxyContainer(
        pod({
          name: 'kube-proxy',
          command: ['/usr/local/bin/kube-proxy', '--config=/var/lib/kube-proxy/config.conf'],
        }),
      )?.name,
    ).toBe('kube-proxy')
    // GCE kube-up's static pod: through a shell, next to a sidecar
    expect(
      kubeProxyContainer(
        pod(
          {name: 'log', command: ['tail', '-f', '/var/log/kube-proxy.log']},
          {
            name: 'kp',
            command: [
              '/bin/sh',
              '-c',
              'kube-proxy --master=https://1.2.3.4 1>>/var/log/kube-proxy.log 2>&1',
            ],
          },
        ),
      )?.name,
    ).toBe('kp')
    // flags only, the image's entrypoint is kube-proxy
    expect(
      kubeProxyContainer(
        pod({name: 'p', image: 'registry.k8s.io/kube-proxy:v1.32.0', args: ['--v=2']}),
      )?.name,
    ).toBe('p')
  })

  it('does not take a look-alike', () => {
    expect(kubeProxyContainer(pod({name: 'x', command: ['kube-proxy-exporter']}))).toBeNull()
    expect(kubeProxyContainer(pod({name: 'x', image: 'example/kube-proxy-dashboard:1'}))).toBeNull()
    expect(
      kubeProxyContainer(pod({name: 'x', command: ['tail', '-f', '/var/log/kube-proxy.log']})),
    ).toBeNull()
  })
})

describe('parseFileDump', () => {
  it('cuts each file out between markers, exactly; an unreadable file is null', () => {
    const T = '==kp-t=='
    const out = `\n${T} /proc/sys/kernel/osrelease\n6.1.0\n\n${T} /proc/net/ip_vs\nno newline at end`
    const files = parseFileDump(out, T, ['/proc/sys/kernel/osrelease', '/proc/net/ip_vs', '/sys/x'])
    expect(files.get('/proc/sys/kernel/osrelease')).toBe('6.1.0\n')
    expect(files.get('/proc/net/ip_vs')).toBe('no newline at end')
    expect(files.get('/sys/x')).toBeNull()
  })
})
