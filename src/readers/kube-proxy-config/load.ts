/** Reads the file of `kp migrate --kube-proxy-config` (a path, or `-` for stdin is not offered: -f may use it). */
import {readFile} from 'node:fs/promises'
import {InputError} from '../../errors.js'
import {describeReadError} from '../bytes.js'
import {type KubeProxyConfigRead, parseKubeProxyConfig} from './parse.js'

export async function loadKubeProxyConfig(path: string): Promise<KubeProxyConfigRead> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    throw new InputError(`${path}:1: cannot read: ${describeReadError(error)}`, 'INPUT_UNREADABLE')
  }
  return parseKubeProxyConfig(text, path)
}
