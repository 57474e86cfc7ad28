/**
 * loadInputs reads files as bytes and decodes them as Latin-1 when they are plain ASCII (the
 * fast path for 30 MB dumps), as UTF-8 otherwise: both must give the text that was written.
 */
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {loadInputs} from '../../src/readers/load.js'

const dir = mkdtempSync(join(tmpdir(), 'kp-load-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

describe('loadInputs decoding', () => {
  it('reads a plain ASCII dump unchanged', async () => {
    const text = '*nat\n:KUBE-SERVICES - [0:0]\nCOMMIT\n'
    writeFileSync(join(dir, 'ascii.rules'), text)
    const {sources} = await loadInputs([join(dir, 'ascii.rules')])
    expect(sources[0]!.text).toBe(text)
  })
  it('reads UTF-8 outside ASCII as UTF-8, not byte by byte', async () => {
    const text = '*filter\n-A INPUT -m comment --comment "café ☕" -j ACCEPT\nCOMMIT\n'
    writeFileSync(join(dir, 'utf8.rules'), text, 'utf8')
    const {sources} = await loadInputs([join(dir, 'utf8.rules')])
    expect(sources[0]!.text).toBe(text)
  })
})
