/**
 * Exact copies of a rule (k/k#76431: 4,190 copies of KUBE-FIREWALL's DROP; k3s#3117: thousands of
 * duplicated jumps) are how a node with two iptables versions or backends, or a sync that appends
 * instead of replacing, shows in a dump. They were read as one rule, without a word: each distinct
 * repeated rule is now one IPT_REPEATED_RULE warning, with how many copies and where the first
 * copy is. Counters of a `-c` save are not part of a rule's text.
 */
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {ROOT} from '../../helpers/run-cli.js'
import {codes, readFixture, readText} from './helpers.js'

const OVERALL = readFileSync(join(ROOT, 'fixtures/iptables/upstream-overall/input.rules'), 'utf8')
const FIREWALL_DROP =
  '-A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP'
const SERVICES_RULE =
  '-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O'

const repeated = (state: Awaited<ReturnType<typeof readText>>) =>
  state.diagnostics.filter((d) => d.code === 'IPT_REPEATED_RULE')
const lineOf = (text: string, needle: string, from = 0): number =>
  text.slice(0, text.indexOf(needle, from)).split('\n').length

describe('rules written more than once', () => {
  it('each distinct repeated rule is one warning with its count, at its first copy; the model is the same', async () => {
    expect(OVERALL).toContain(FIREWALL_DROP)
    expect(OVERALL).toContain(SERVICES_RULE)
    // KUBE-FIREWALL's DROP 4 times (twice with counters, as `iptables-save -c` prints them), one
    // KUBE-SERVICES rule twice, not next to each other.
    const text = OVERALL.replace(
      FIREWALL_DROP,
      [FIREWALL_DROP, `[12:720] ${FIREWALL_DROP}`, `[0:0] ${FIREWALL_DROP}`, FIREWALL_DROP].join(
        '\n',
      ),
    ).replace(
      /(-A KUBE-SERVICES [^\n]*\n)(-A KUBE-SERVICES [^\n]*\n)/,
      (all) => `${all}${SERVICES_RULE}\n`,
    )
    const state = await readText(text)
    const found = repeated(state)
    expect(found).toHaveLength(2)
    const firewall = found.find((d) => d.message.includes('KUBE-FIREWALL'))!
    const first = lineOf(text, FIREWALL_DROP)
    expect(firewall.message).toContain(
      `the rule on line ${first} of filter KUBE-FIREWALL is there 4 times (again on line ${first + 1})`,
    )
    expect(firewall.source).toEqual({path: 'test.rules', line: first + 1})
    expect(found.find((d) => d.message.includes('KUBE-SERVICES'))!.message).toContain(
      'is there 2 times',
    )
    expect(firewall.severity).toBe('warning')
    // The copies add nothing to the model.
    const plain = await readText(OVERALL)
    expect(state.services).toEqual(plain.services.map((sp) => ({...sp, rules: expect.any(Array)})))
  })

  it('no fixture of a real or upstream dump has a repeated rule', async () => {
    for (const dir of [
      'upstream-overall',
      'realsave-overall',
      'handmade-node-with-cni',
      'realsave-syncrepeated-fullresync',
      'legacy-k8s-1.1',
      'handmade-legacy-xlb',
    ]) {
      expect(codes(await readFixture(dir)), dir).not.toContain('IPT_REPEATED_RULE')
    }
  })
})
