/**
 * Reading a `kp collect` bundle with -f DIR (src/readers/load.ts): only the files the manifest
 * marks `read` are sources; failed, empty and leftover outputs are not; a manifest cannot
 * point outside its folder. Bundles are written here by hand in the manifest's shape.
 */
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {InputError} from '../../src/errors.js'
import type {BundleFile} from '../../src/readers/bundle.js'
import {loadInputs} from '../../src/readers/load.js'
import {readFiles} from '../../src/readers/read-state.js'
import {bundleFile, writeBundle as writeBundleIn} from '../helpers/bundle.js'
import {ROOT} from '../helpers/run-cli.js'

const tmp = mkdtempSync(join(tmpdir(), 'kp-bundle-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

const OVERALL = readFileSync(`${ROOT}fixtures/iptables/upstream-overall/input.rules`, 'utf8')

const file = bundleFile
const writeBundle = (name: string, files: Array<[BundleFile, string | null]>): string =>
  writeBundleIn(join(tmp, name), files)

describe('reading a bundle folder', () => {
  it('reads only the files marked read, with their format and tool, and returns the facts', async () => {
    const dir = writeBundle('mixed', [
      [file('iptables-nft-save.txt', {tool: 'iptables v1.8.9 (nf_tables)'}), OVERALL],
      [file('iptables-legacy-save.txt', {read: false}), OVERALL], // a leftover backend
      [file('ip6tables-nft-save.txt'), ''], // empty on the node: nothing to read
      [
        file('nft-ip-kube-proxy.json', {
          format: 'nft-json',
          exitCode: 1,
          error: 'nft exited with status 1',
          read: false,
        }),
        '',
      ],
      [
        file(null, {
          command: ['ipvsadm', '-Sn'],
          format: 'ipvsadm',
          exitCode: null,
          error: 'ipvsadm is not installed',
          read: false,
        }),
        null,
      ],
      [file('uname-r.txt', {format: null, read: false}), '6.1.0\n'],
    ])
    const loaded = await loadInputs([dir])
    // Sources decode their text on first use: compare what they say, not the objects.
    expect(
      loaded.sources.map(({path, text, format, tool}) => ({path, text, format, tool})),
    ).toEqual([
      {
        path: join(dir, 'iptables-nft-save.txt'),
        text: OVERALL,
        format: 'iptables-save',
        tool: 'iptables v1.8.9 (nf_tables)',
      },
    ])
    expect(loaded.facts).toMatchObject({
      node: 'node-a',
      kernel: '6.1.0',
      iptablesBackends: ['nf_tables'],
    })
  })

  it('refuses a manifest path that leaves the bundle folder (exit 3)', async () => {
    const dir = writeBundle('escape', [[file('../../etc/passwd'), null]])
    const err = await loadInputs([dir]).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(InputError)
    expect((err as InputError).message).toBe(
      `${join(dir, 'manifest.json')}:1: bundle file path "../../etc/passwd" points outside the bundle`,
    )
    const abs = writeBundle('absolute', [[file('/etc/passwd'), null]])
    await expect(loadInputs([abs])).rejects.toMatchObject({code: 'INPUT_BAD_BUNDLE', exitCode: 3})
  })

  it('says so when the bundle holds nothing to read (exit 3)', async () => {
    const dir = writeBundle('nothing', [[file('iptables-nft-save.txt', {read: false}), OVERALL]])
    await expect(loadInputs([dir])).rejects.toMatchObject({
      code: 'INPUT_EMPTY_BUNDLE',
      exitCode: 3,
      message: `${join(dir, 'manifest.json')}:1: the bundle holds no kube-proxy rules to read (kp collect found none on node-a)`,
    })
  })

  it('reports a listed file that is missing from the folder with its path (exit 3)', async () => {
    const dir = writeBundle('missing', [[file('iptables-nft-save.txt'), null]])
    await expect(loadInputs([dir])).rejects.toMatchObject({
      code: 'INPUT_UNREADABLE',
      message: `${join(dir, 'iptables-nft-save.txt')}:1: cannot read bundle file: no such file or directory`,
    })
  })

  it('gives back what kp collect warned about, each at its line of the manifest', async () => {
    const warnings = [
      'kube-proxy chains exist in both iptables backends (nf_tables: 40 KUBE-* rules, legacy: 1); reading nf_tables',
      'leftover IPVS-mode iptables chains in iptables-nft-save',
    ]
    const dir = writeBundleIn(
      join(tmp, 'warned'),
      [[file('iptables-nft-save.txt'), OVERALL]],
      undefined,
      warnings,
    )
    const manifestPath = join(dir, 'manifest.json')
    const lines = readFileSync(manifestPath, 'utf8').split('\n')
    const lineOf = (w: string) => lines.findIndex((l) => l.includes(JSON.stringify(w))) + 1
    const {diagnostics} = await loadInputs([dir])
    expect(diagnostics).toEqual(
      warnings.map((w) => ({
        severity: 'warning',
        code: 'INPUT_BUNDLE_WARNING',
        message: `kp collect on node-a warned: ${w}`,
        source: {path: manifestPath, line: lineOf(w)},
      })),
    )
    expect(lineOf(warnings[0]!)).toBeGreaterThan(1)
    // And readFiles keeps them in the state, so --json and a saved state hold them too.
    const {state} = await readFiles({files: [dir]})
    expect(state.diagnostics.filter((d) => d.code === 'INPUT_BUNDLE_WARNING')).toEqual(diagnostics)
  })
})
