/**
 * A ProxyState saved by `kp ... --json`, read back so output can be piped into kp again.
 * Checked for shape, not trusted: a wrong schemaVersion or kind is an input error.
 */
import type {ProxyState} from '../../model/types.js'
import type {ParsedSource, SourceText} from '../types.js'

function lineOf(text: string, offset: number): number {
  let line = 1
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++
  return line
}

export function parse(src: SourceText): ParsedSource<ProxyState | null> {
  const source = {path: src.path, format: 'kp-json', tool: src.tool ?? null}
  const fail = (message: string, line = 1): ParsedSource<null> => ({
    format: 'kp-json',
    source,
    data: null,
    diagnostics: [{severity: 'error', code: 'KPJSON_INVALID', message, source: {path: src.path, line}}],
  })
  let value: unknown
  try {
    value = JSON.parse(src.text)
  } catch (error) {
    const m = /position (\d+)/.exec((error as Error).message)
    return fail(`not valid JSON: ${(error as Error).message}`, m ? lineOf(src.text, Number(m[1])) : 1)
  }
  const v = value as Partial<ProxyState>
  if (v?.kind !== 'ProxyState') return fail('not a kp ProxyState (kind is not "ProxyState")')
  if (v.schemaVersion !== 1) return fail(`unsupported schemaVersion ${JSON.stringify(v.schemaVersion)}; this kp reads 1`)
  if (!Array.isArray(v.services) || !Array.isArray(v.diagnostics) || !Array.isArray(v.foreign) || typeof v.node !== 'object' || !Array.isArray(v.sources)) {
    return fail('malformed ProxyState: services, foreign, diagnostics, sources and node are required')
  }
  if (!['iptables', 'ipvs', 'nftables', 'cluster'].includes(String(v.mode))) return fail(`malformed ProxyState: unknown mode ${JSON.stringify(v.mode)}`)
  return {format: 'kp-json', source, data: v as ProxyState, diagnostics: []}
}
