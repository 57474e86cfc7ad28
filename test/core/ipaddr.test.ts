import {readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {ipaddr} from '../../src/core/ipaddr.js'

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, {withFileTypes: true}).flatMap((e) =>
    e.isDirectory()
      ? sourcesUnder(join(dir, e.name))
      : e.name.endsWith('.ts')
        ? [join(dir, e.name)]
        : [],
  )
}

describe('ipaddr.js is loaded with require (src/core/ipaddr.ts)', () => {
  it('is the package itself', () => {
    expect(ipaddr.IPv4.isValid('10.0.0.1')).toBe(true)
    expect(ipaddr.parse('fd00:0::1').toString()).toBe('fd00::1')
  })

  it('is imported from src/core/ipaddr.ts everywhere else: an ESM import of it costs every kp process ~60 ms at exit', () => {
    const offenders = sourcesUnder('src').filter(
      (f) =>
        !f.endsWith(join('core', 'ipaddr.ts')) &&
        /^import (?!type )[^\n]* from 'ipaddr\.js'/m.test(readFileSync(f, 'utf8')),
    )
    expect(offenders).toEqual([])
  })
})
