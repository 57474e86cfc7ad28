/**
 * The rule store keeps, per rule, which piece of the dump its line is in. A file is read in
 * 1 MiB pieces of whole lines; a dump that is one rule written 200,000 times (thousands of
 * copies are what a node with two iptables versions writing one table shows: IPT_REPEATED_RULE)
 * has pieces that are alike character for character. Each row's piece was checked against the
 * last one stored with `===`, which compares two alike strings whole: 1 MiB per rule, 44 s for
 * 150,000 copies. A piece is now stored once, when its first rule is. Without that, this read
 * runs far past the test's timeout; with it, it takes about a second.
 */
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {readFiles} from '../../../src/readers/read-state.js'
import {ROOT} from '../../helpers/run-cli.js'

const tmp = mkdtempSync(join(tmpdir(), 'kp-rule-store-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

const COPIES = 200_000
const OVERALL = readFileSync(join(ROOT, 'fixtures/iptables/upstream-overall/input.rules'), 'utf8')
const RULE =
  '-A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP'

describe('a dump of alike pieces', () => {
  it(`reads ${COPIES.toLocaleString('en')} copies of one rule in linear time, and counts them`, async () => {
    const file = join(tmp, 'copies.rules')
    expect(OVERALL).toContain(RULE)
    writeFileSync(file, OVERALL.replace(RULE, Array<string>(COPIES).fill(RULE).join('\n')))
    const {state} = await readFiles({files: [file]})
    const first = OVERALL.slice(0, OVERALL.indexOf(RULE)).split('\n').length
    const repeated = state.diagnostics.filter((d) => d.code === 'IPT_REPEATED_RULE')
    expect(repeated.map((d) => d.message)).toEqual([
      expect.stringContaining(
        `the rule on line ${first} of filter KUBE-FIREWALL is there ${COPIES.toLocaleString('en')} times (again on line ${first + 1})`,
      ),
    ])
    // The rest of the dump is read as without the copies.
    const plain = await readFiles({
      files: [join(ROOT, 'fixtures/iptables/upstream-overall/input.rules')],
    })
    expect(state.services.length).toBe(plain.state.services.length)
  }, 30_000)
})
