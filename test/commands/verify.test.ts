/**
 * `kp verify` and `kp migrate --verify` on inputs they cannot load: refused before any namespace
 * is made (no root needed), with the exit code and code of the catalogue.
 */
import {describe, expect, it} from 'vitest'
import {runKp} from '../helpers/run-cli.js'

describe('kp verify input checks', () => {
  it('says IPVS cannot be verified here (exit 3, INPUT_VERIFY_UNSUPPORTED)', () => {
    const r = runKp(['verify', '-f', 'fixtures/migrate/ipvs-node-a/ipvsadm-Sn.txt', '--json'])
    expect(r.exitCode).toBe(3)
    expect(JSON.parse(r.stdout).error.code).toBe('INPUT_VERIFY_UNSUPPORTED')
    expect(r.stderr).toMatch(/cannot verify IPVS rules here/)
  })

  it('refuses an `iptables -S` listing, which iptables-restore cannot load (exit 3)', () => {
    const r = runKp(['verify', '-f', 'fixtures/iptables/list-rules-overall/input.rules'])
    expect(r.exitCode).toBe(3)
    expect(r.stderr).toMatch(/not a whole iptables-save dump/)
  })

  it('refuses an IPv6 `iptables -L` listing for being a listing, not for being IPv6 (exit 3)', () => {
    const r = runKp(['verify', '-f', 'fixtures/iptables-list/ipv6/nat-filter-n-v.txt', '--json'])
    expect(r.exitCode).toBe(3)
    const error = JSON.parse(r.stdout).error as {code: string; message: string}
    expect(error.code).toBe('INPUT_VERIFY_UNSUPPORTED')
    expect(error.message).toMatch(/not a whole iptables-save dump/)
    expect(error.message).not.toMatch(/IPv4/)
  })

  it('refuses a --node-ip that is not an IPv4 address before building anything (exit 2)', () => {
    const r = runKp([
      'verify',
      '-f',
      'fixtures/verify/legacy-xlb-lb-nolocal/input.rules',
      '--node-ip',
      'fd00::6',
    ])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/--node-ip "fd00::6" is not an IPv4 address/)
  })

  it('kp migrate --verify needs a target with rules to load (exit 2)', () => {
    const r = runKp([
      'migrate',
      '--to',
      'ipvs',
      '--verify',
      '-f',
      'fixtures/iptables/upstream-overall/input.rules',
    ])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/--verify loads iptables or nftables rules/)
  })
})
