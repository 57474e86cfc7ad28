/**
 * `kp completion bash|zsh|fish` (issue 21 §6): made from the commands' flag definitions. The bash
 * script is run by bash itself, the way bash's programmable completion calls it.
 */
import {spawnSync} from 'node:child_process'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {FORMAT_IDS} from '../../src/readers/registry.js'
import {runKpInProcess} from '../helpers/run-in-process.js'

const tmp = mkdtempSync(join(tmpdir(), 'kp-completion-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))
const script = join(tmp, 'kp.bash')

beforeAll(async () => {
  const r = await runKpInProcess(['completion', 'bash'])
  expect(r.exitCode).toBe(0)
  writeFileSync(script, r.stdout)
})

/** What bash offers for the command line `words`, the last being the word under the cursor. */
function complete(words: string[]): string[] {
  const array = words.map((w) => `'${w}'`).join(' ')
  const r = spawnSync(
    'bash',
    [
      '-c',
      `source '${script}'; COMP_WORDS=(${array}); COMP_CWORD=${words.length - 1}; _kp_completion; printf '%s\\n' "\${COMPREPLY[@]}"`,
    ],
    {encoding: 'utf8'},
  )
  expect(r.stderr).toBe('')
  return r.stdout.split('\n').filter(Boolean).sort()
}

describe('kp completion bash', () => {
  it('is valid bash', () => {
    expect(spawnSync('bash', ['-n', script]).status).toBe(0)
  })
  it('completes commands, flags, formats, modes and -o values', () => {
    expect(complete(['kp', 'ex'])).toEqual(['explain'])
    expect(complete(['kp', ''])).toEqual(
      ['collect', 'completion', 'diff', 'explain', 'list', 'migrate', 'trace', 'verify'].sort(),
    )
    expect(complete(['kp', 'list', '--fo'])).toEqual(['--format'])
    expect(complete(['kp', 'list', '--format', ''])).toEqual([...FORMAT_IDS].sort())
    expect(complete(['kp', 'explain', '--mode', 'i'])).toEqual(['iptables', 'ipvs'])
    expect(complete(['kp', 'diff', '-o', 'y'])).toEqual(['yaml'])
    expect(complete(['kp', 'migrate', '--to', 'nf'])).toEqual(['nftables'])
    expect(complete(['kp', 'completion', 'z'])).toEqual(['zsh'])
  })
})

describe('kp completion zsh and fish', () => {
  it('name every command and the closed values of their flags', async () => {
    const zsh = (await runKpInProcess(['completion', 'zsh'])).stdout
    const fish = (await runKpInProcess(['completion', 'fish'])).stdout
    expect(zsh.startsWith('#compdef kp\n')).toBe(true)
    expect(zsh).toContain(`:format:(${FORMAT_IDS.join(' ')})`)
    expect(zsh).toContain("'*-o[")
    expect(fish).toContain("complete -c kp -n __fish_use_subcommand -a explain -d 'Explain")
    expect(fish).toContain(
      `complete -c kp -n '__fish_seen_subcommand_from list' -l format -x -a '${FORMAT_IDS.join(' ')}'`,
    )
  })
  it('an unknown shell is a usage error (exit 2)', async () => {
    const r = await runKpInProcess(['completion', 'tcsh'])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain('kp: Expected tcsh to be one of: bash, zsh, fish')
  })
})
