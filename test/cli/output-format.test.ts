/**
 * kubectl's -o on every command (issue 21 §6): -o json is --json, -o yaml the same document as
 * YAML, -o wide the text view with more detail, -o table the text view.
 */
import {parse as parseYaml} from 'yaml'
import {describe, expect, it} from 'vitest'
import {outputFormatOf} from '../../src/cli/output-format.js'
import {runKpInProcess} from '../helpers/run-in-process.js'

const RULES = 'fixtures/iptables/upstream-overall/input.rules'

describe('outputFormatOf', () => {
  it('reads -o in each spelling oclif takes, the last one winning, not after --', () => {
    expect(outputFormatOf(['list', '-o', 'json'])).toBe('json')
    expect(outputFormatOf(['-oyaml'])).toBe('yaml')
    expect(outputFormatOf(['-o=wide'])).toBe('wide')
    expect(outputFormatOf(['--output', 'table'])).toBe('table')
    expect(outputFormatOf(['--output=json', '-o', 'yaml'])).toBe('yaml')
    expect(outputFormatOf(['--', '-o', 'json'])).toBeNull()
    expect(outputFormatOf(['-o', 'bogus', '--json'])).toBeNull()
  })
})

describe('-o on the commands', () => {
  it.each([[['list']], [['explain', 'ns5/svc5']], [['migrate', '--to', 'nftables', '--check']]])(
    'kp %j: -o json is --json, -o yaml is the same document',
    async (args) => {
      const asJson = await runKpInProcess([...args, '--json', '-f', RULES])
      const o = await runKpInProcess([...args, '-o', 'json', '-f', RULES])
      const y = await runKpInProcess([...args, '-o', 'yaml', '-f', RULES])
      expect(o.exitCode).toBe(asJson.exitCode)
      expect(y.exitCode).toBe(asJson.exitCode)
      expect(JSON.parse(o.stdout)).toEqual(JSON.parse(asJson.stdout))
      expect(parseYaml(y.stdout)).toEqual(JSON.parse(asJson.stdout))
    },
  )

  it('kp diff -o yaml prints the DiffResult', async () => {
    const y = await runKpInProcess(['diff', RULES, RULES, '-o', 'yaml'])
    expect(y.exitCode).toBe(0)
    expect(parseYaml(y.stdout)).toMatchObject({kind: 'DiffResult', equal: true})
  })

  it('-o wide adds detail: every endpoint in kp list, the rule lines in kp explain', async () => {
    const list = await runKpInProcess(['list', '-f', RULES])
    const wide = await runKpInProcess(['list', '-o', 'wide', '-f', RULES])
    expect(await runKpInProcess(['list', '-o', 'table', '-f', RULES])).toEqual(list)
    expect(list.stdout).not.toContain('10.180.0.3:80')
    expect(wide.stdout).toContain('10.180.0.3:80')
    const explain = await runKpInProcess(['explain', 'ns5/svc5', '-o', 'wide', '-f', RULES])
    expect(explain.stdout).toContain(`${RULES}:89`)
  })

  it('an error under -o yaml is the error document as YAML, exit 2 for a bad -o', async () => {
    const r = await runKpInProcess(['list', '-o', 'yaml', '--nosuch', '-f', RULES])
    expect(r.exitCode).toBe(2)
    expect(parseYaml(r.stdout)).toMatchObject({error: {code: 'USAGE_INVALID', exitCode: 2}})
    const bad = await runKpInProcess(['list', '-o', 'bogus', '-f', RULES])
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr).toContain('Expected --output=bogus to be one of: json, yaml, table, wide')
  })
})
