import {existsSync, mkdtempSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {makeDirectory} from '../../src/core/directory.js'

const tmp = mkdtempSync(join(tmpdir(), 'kp-dir-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

describe('makeDirectory', () => {
  it('makes the folder and its missing parents, and accepts one that is there', async () => {
    const deep = join(tmp, 'a', 'b', 'c')
    await makeDirectory(deep)
    expect(statSync(deep).isDirectory()).toBe(true)
    await makeDirectory(deep)
    await makeDirectory(join(tmp, 'a', '..', 'a', 'b'))
    expect(statSync(join(tmp, 'a', 'b')).isDirectory()).toBe(true)
  })

  it('refuses a file in the way, as the last step or a parent', async () => {
    const file = join(tmp, 'file')
    writeFileSync(file, '')
    await expect(makeDirectory(file)).rejects.toMatchObject({code: 'EEXIST'})
    await expect(makeDirectory(join(file, 'sub'))).rejects.toMatchObject({code: 'ENOTDIR'})
    expect(existsSync(join(file, 'sub'))).toBe(false)
  })

  // Node 20's mkdir(path, {recursive: true}) spins forever here (procfs refuses new entries with ENOENT).
  it.skipIf(!existsSync('/proc/self'))(
    "ends with the kernel's refusal where recursive mkdir never returns (/proc)",
    async () => {
      await expect(makeDirectory('/proc/kp-test-no-such-folder/sub')).rejects.toMatchObject({
        code: 'ENOENT',
      })
    },
    5000,
  )
})
