/**
 * `kp collect` bundles written by hand, in the manifest's shape (src/readers/bundle.ts), for the
 * tests that read one: a folder with its dumps and a manifest.json naming them.
 */
import {mkdirSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import type {BundleFacts, BundleFile, BundleManifest} from '../../src/readers/bundle.js'

/** One file entry of a manifest: an iptables-save output that was read, unless `over` says otherwise. */
export const bundleFile = (path: string | null, over: Partial<BundleFile> = {}): BundleFile => ({
  path,
  format: 'iptables-save',
  command: [path ?? 'x'],
  tool: null,
  exitCode: 0,
  stderr: '',
  error: null,
  read: true,
  ...over,
})

export const NODE_A_FACTS: BundleFacts = {
  node: 'node-a',
  kernel: '6.1.0',
  nftVersion: '1.0.6',
  iptablesBackends: ['nf_tables'],
  sysctls: {'net.ipv4.conf.all.route_localnet': '1'},
}

/** Writes folder `dir`: each file with its text (none for a null path or text), and the manifest. */
export function writeBundle(
  dir: string,
  files: Array<[BundleFile, string | Buffer | null]>,
  facts: BundleFacts = NODE_A_FACTS,
  warnings: string[] = [],
): string {
  mkdirSync(dir, {recursive: true})
  const manifest: BundleManifest = {
    kind: 'KpBundle',
    schemaVersion: 1,
    createdBy: 'kp/0.1.0',
    createdAt: '2026-12-02T14:00:00.000Z',
    mode: 'iptables',
    warnings,
    files: files.map(([f]) => f),
    facts,
  }
  for (const [f, text] of files) {
    if (f.path === null || text === null) continue
    mkdirSync(dirname(join(dir, f.path)), {recursive: true})
    writeFileSync(join(dir, f.path), text)
  }
  // Indented as kp collect writes it, so each warning has a line of its own.
  writeFileSync(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  return dir
}
