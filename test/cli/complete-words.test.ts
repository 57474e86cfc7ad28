/**
 * kubectl's plugin completion protocol (cobra's `__complete`), as kp answers it for
 * `kubectl kp …<TAB>` (src/cli/completion.ts completeWords). The real kubectl asking the single
 * executable is in test/cli/sea/executable.test.ts.
 */
import {describe, expect, it} from 'vitest'
import {completeWords} from '../../src/cli/completion.js'
import type {CompletionCommand} from '../../src/cli/completion.js'
import {completionRequest} from '../../src/cli/sea/identity.js'

const COMMANDS: CompletionCommand[] = [
  {id: 'completion', summary: 'Print a script', flags: [], argOptions: ['bash', 'zsh', 'fish']},
  {
    id: 'explain',
    summary: 'Explain where\ttraffic goes',
    argOptions: [],
    flags: [
      {name: 'file', char: 'f', summary: 'Read a dump', kind: 'file'},
      {name: 'format', summary: 'Force a format', kind: 'choice', options: ['nft', 'nft-json']},
      {name: 'help', char: 'h', summary: 'Show help.', kind: 'boolean'},
      {name: 'namespace', char: 'n', summary: 'Namespace', kind: 'value'},
    ],
  },
]
const complete = (...words: string[]) => completeWords(COMMANDS, words)

describe('completeWords', () => {
  it('completes a command, with its summary on one line', () => {
    expect(complete('ex')).toBe('explain\tExplain where traffic goes\n:4\n')
    expect(complete('')).toBe(
      'completion\tPrint a script\nexplain\tExplain where traffic goes\n:4\n',
    )
    expect(complete('nosuch', '')).toBe(':4\n')
  })
  it("completes a command's flags, long and short", () => {
    expect(complete('explain', '--fo')).toBe('--format\tForce a format\n:4\n')
    expect(complete('explain', '-')).toMatch(/^--file\tRead a dump\n-f\tRead a dump\n--format\t/)
  })
  it("completes a flag's value: a choice, a file name (left to the shell), anything else", () => {
    expect(complete('explain', '--format', 'nft-')).toBe('nft-json\n:4\n')
    expect(complete('explain', '--format=n')).toBe('--format=nft\n--format=nft-json\n:4\n')
    expect(complete('explain', '-f', '')).toBe(':0\n')
    expect(complete('explain', '-n', '')).toBe(':4\n')
  })
  it("completes an argument's closed list, or leaves sources to the shell", () => {
    expect(complete('completion', 'z')).toBe('zsh\n:4\n')
    expect(complete('explain', '-h', '')).toBe(':0\n')
  })
})

describe('completionRequest', () => {
  it('is every word when run as kubectl_complete-kp', () => {
    expect(completionRequest('/usr/local/bin/kubectl_complete-kp', ['explain', ''])).toEqual([
      'explain',
      '',
    ])
  })
  it('is the words after __complete under any other name, else none', () => {
    expect(completionRequest('/usr/local/bin/kp', ['__complete', 'ex'])).toEqual(['ex'])
    expect(completionRequest('/usr/local/bin/kubectl-kp', ['explain', '__complete'])).toBeNull()
  })
})
