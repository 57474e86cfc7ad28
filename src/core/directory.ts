/**
 * `mkdir -p` that ends. Node 20's `mkdir(path, {recursive: true})` never returns for a path
 * whose last step the kernel refuses with ENOENT although its parent exists: `/proc/x` (procfs
 * creates no entries) spins at full CPU forever, as `kp migrate --out-dir /proc/x` did
 * (test/core/directory.test.ts). Here each missing folder is made once, parents first, and any
 * refusal is thrown as it comes.
 */
import {mkdir, stat} from 'node:fs/promises'
import {dirname, resolve} from 'node:path'

/** Makes `path` and any missing parents; resolves when it is a folder, rejects with the failing call's error. */
export async function makeDirectory(path: string): Promise<void> {
  const absolute = resolve(path)
  if (await isDirectory(absolute)) return
  const parent = dirname(absolute)
  if (parent !== absolute) await makeDirectory(parent)
  try {
    await mkdir(absolute)
  } catch (error) {
    // Made meanwhile (another process, or a parent that was a symlink to a folder): fine.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST' && (await isDirectory(absolute))) return
    throw error
  }
}

/** True for a folder (or a symlink to one); false when nothing is there; other errors (EACCES, ENOTDIR) are thrown. */
async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw error
  }
}
