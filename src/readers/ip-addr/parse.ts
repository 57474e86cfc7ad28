import type {ParsedSource, SourceText} from '../types.js'

// Placeholder until this reader lands: says so instead of guessing.
export function parse(src: SourceText): ParsedSource {
  return {
    format: 'ip-addr',
    source: {path: src.path, format: 'ip-addr', tool: src.tool ?? null},
    data: null,
    diagnostics: [{severity: 'error', code: 'INPUT_UNSUPPORTED_FORMAT', message: 'kp cannot read ip-addr input yet', source: {path: src.path, line: 1}}],
  }
}
