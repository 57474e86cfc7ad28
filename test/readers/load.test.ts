/**
 * loadInputs reads files as bytes and decodes them as Latin-1 when they are plain ASCII (the
 * fast path for 30 MB dumps), as UTF-8 otherwise: both must give the text that was written.
 */
import {spawn, spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {loadInputs} from '../../src/readers/load.js'
import {readState} from '../../src/readers/read-state.js'
import {kpCommand, ROOT, runKp} from '../helpers/run-cli.js'

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

describe('loadInputs on a hand-edited bundle', () => {
  it('a manifest whose "files" holds a non-object is an input error (exit 3), not a TypeError', async () => {
    // Was `TypeError: Cannot read properties of null (reading 'format')`, exit 70.
    const bundle = join(dir, 'bundle-null-entry')
    mkdirSync(bundle)
    writeFileSync(
      join(bundle, 'manifest.json'),
      JSON.stringify({kind: 'KpBundle', schemaVersion: 1, files: [null], facts: null}),
    )
    await expect(loadInputs([bundle])).rejects.toMatchObject({
      code: 'INPUT_BAD_BUNDLE',
      message: expect.stringContaining('an entry of "files" is not an object'),
    })
  })

  it("keeps only facts of the manifest's types (a sysctl of 1 made kp migrate fail on .trim())", async () => {
    const bundle = join(dir, 'bundle-odd-facts')
    mkdirSync(bundle)
    writeFileSync(
      join(bundle, 'sn.txt'),
      '-A -t 10.96.0.1:443 -s rr\n-a -t 10.96.0.1:443 -r 10.0.0.10:6443 -m -w 1\n',
    )
    const file = {
      path: 'sn.txt',
      format: 'ipvsadm',
      command: ['ipvsadm', '-Sn'],
      tool: null,
      exitCode: 0,
      stderr: '',
      error: null,
      read: true,
    }
    const facts = {
      node: {toString: 1},
      kernel: '6.1.0',
      nftVersion: 5,
      iptablesBackends: 'nf_tables',
      sysctls: {'net.ipv4.conf.all.arp_ignore': 1, 'net.ipv4.vs.conntrack': '1'},
    }
    writeFileSync(
      join(bundle, 'manifest.json'),
      JSON.stringify({kind: 'KpBundle', schemaVersion: 1, files: [file], facts}),
    )
    expect((await loadInputs([bundle])).facts).toEqual({
      node: null,
      kernel: '6.1.0',
      nftVersion: null,
      iptablesBackends: null,
      sysctls: {'net.ipv4.vs.conntrack': '1'},
    })
  })
})

describe('a byte order mark at the start of a file', () => {
  // Windows editors start a UTF-8 file with U+FEFF; a dump pasted into one must read as the same dump.
  const BOM = '\ufeff'
  it.each([
    ['iptables-save', 'fixtures/iptables/upstream-overall/input.rules'],
    ['nft list', 'fixtures/nft/upstream-overall/list.nft'],
    ['nft -j', 'fixtures/nft-json/upstream-overall/input.json'],
    ['ipvsadm -Ln -t', 'fixtures/ipvsadm/single-service/ipvsadm-Ln-t-10.96.100.20-80.txt'],
    ['ip -j addr', 'fixtures/ip-addr/real-netns/ip-j-p-addr.json'],
    ['kp JSON', 'fixtures/kp-json/overall/state.json'],
  ])('%s: the same state as without it', async (_name, fixture) => {
    const text = readFileSync(join(ROOT, fixture), 'utf8')
    const plain = join(mkdtempSync(join(dir, 'plain-')), 'input')
    const marked = join(mkdtempSync(join(dir, 'bom-')), 'input')
    writeFileSync(plain, text)
    writeFileSync(marked, BOM + text)
    const read = async (file: string) =>
      JSON.stringify(await readState(await loadInputs([file]))).replaceAll(file, 'FILE')
    const withMark = await read(marked)
    expect(withMark).toBe(await read(plain))
    expect(withMark).not.toContain('INPUT_UNKNOWN_FORMAT')
  })
})

describe('pipes and devices (-f <(iptables-save))', () => {
  it('reads a pipe whole, in pieces', async () => {
    // More than one 256 KiB piece, with no NUL byte: nothing is cut.
    const text =
      '*nat\n:KUBE-SERVICES - [0:0]\n' +
      '# filler line for the pipe test\n'.repeat(20_000) +
      'COMMIT\n'
    const fifo = join(dir, 'pipe')
    const file = join(dir, 'pipe-source.rules')
    writeFileSync(file, text)
    spawnSync('mkfifo', [fifo])
    // The writer is another process: loadInputs reads the pipe synchronously.
    spawn('sh', ['-c', `cat "$0" > "$1"`, file, fifo], {stdio: 'ignore'})
    const {sources} = await loadInputs([fifo])
    expect(sources[0]!.text).toBe(text)
  })

  // Was read with readFileSync until memory ran out: a device never ends.
  it.skipIf(!existsSync('/dev/zero'))(
    'refuses /dev/zero and /dev/urandom (with -f, and /dev/zero on stdin) as binary data, exit 3, without reading them to the end',
    () => {
      for (const device of ['/dev/zero', '/dev/urandom']) {
        const r = runKp(['list', '-f', device], {timeout: 20_000})
        expect(r.exitCode, device).toBe(3)
        expect(r.stderr).toContain(`${device}:1: binary data (NUL bytes), not a text dump`)
      }
      const stdin = spawnSync(
        'sh',
        ['-c', 'exec "$@" < /dev/zero', 'sh', ...kpCommand(), 'list', '-f', '-'],
        {cwd: ROOT, encoding: 'utf8', timeout: 20_000},
      )
      expect(stdin.status).toBe(3)
      expect(stdin.stderr).toContain('binary data (NUL bytes), not a text dump')
    },
  )
})
