/**
 * `kp list` on the IPVS inputs of issue 21 §3 and §4: /proc/net/ip_vs and a headerless
 * `ipvsadm -Ln`, sniffed or named with --format; and a node whose 127.0.0.1 NodePort lacks a
 * real server (kubernetes #89923), whose --json keeps that frontend's endpoints and reads back.
 */
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {IPVSADM_LN, loopbackNodePortLacksOne} from '../helpers/ipvs-disagree.js'
import {runKpInProcess} from '../helpers/run-in-process.js'

const PROC = 'fixtures/ipvsadm/proc/proc-net-ip_vs.txt'
const tmp = mkdtempSync(join(tmpdir(), 'kp-list-ipvs-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))
const file = (name: string, text: string) => {
  const path = join(tmp, name)
  writeFileSync(path, text)
  return path
}

describe('kp list on IPVS inputs', () => {
  it('/proc/net/ip_vs and a headerless ipvsadm -Ln, sniffed and with --format ipvsadm', async () => {
    const headerless = file('pasted.txt', IPVSADM_LN.split('\n').slice(3).join('\n'))
    const services = (stdout: string) =>
      JSON.parse(stdout).services.map((sp: object) => ({...sp, rules: [], sessionAffinity: null}))
    const whole = await runKpInProcess([
      'list',
      '--json',
      '-f',
      'fixtures/ipvs/generated/ipvsadm-Ln.txt',
    ])
    expect(services(whole.stdout).length).toBeGreaterThan(10)
    for (const args of [
      ['-f', PROC],
      ['-f', PROC, '--format', 'ipvsadm'],
      ['-f', headerless],
      ['-f', headerless, '--format', 'ipvsadm'],
    ]) {
      const r = await runKpInProcess(['list', '--json', ...args])
      expect(r.exitCode, args.join(' ')).toBe(0)
      const state = JSON.parse(r.stdout)
      expect(state.mode).toBe('ipvs')
      expect(state.sources[0].format).toBe('ipvsadm')
      expect(services(r.stdout)).toEqual(services(whole.stdout))
    }
  })

  it('a frontend`s own endpoints are in --json, read back unchanged, and shown by -o wide', async () => {
    const listing = file('ipvsadm-Ln.txt', loopbackNodePortLacksOne())
    const r = await runKpInProcess(['list', '--json', '-f', listing])
    expect(r.exitCode).toBe(0)
    expect(r.stderr).toContain('IPVS_FRONTENDS_DISAGREE')
    const saved = file('state.json', r.stdout)
    const again = await runKpInProcess(['list', '--json', '-f', saved])
    expect(again.exitCode).toBe(0)
    expect(JSON.parse(again.stdout)).toEqual(JSON.parse(r.stdout))
    const fe = JSON.parse(r.stdout)
      .services.flatMap((sp: {frontends: {ip: string | null}[]}) => sp.frontends)
      .find((f: {ip: string | null}) => f.ip === '127.0.0.1')
    expect(fe.endpoints.map((e: {ip: string}) => e.ip)).toEqual(['10.244.1.5', '10.244.2.7'])
    const wide = await runKpInProcess(['list', '-o', 'wide', '-f', saved])
    expect(wide.exitCode).toBe(0)
    expect(wide.stdout).toContain('own endpoints (lacks 10.244.3.3:8080)')
  })
})
