import type {ParsedSource, SourceText} from '../types.js'

// Placeholder until this reader lands: says so instead of guessing.
export function parse(src: SourceText): ParsedSource {
  return {
    format: 'nft-json',
    source: {path: src.path, format: 'nft-json', tool: src.tool ?? null},
    data: null,
    diagnostics: [{severity: 'error', code: 'INPUT_UNSUPPORTED_FORMAT', message: 'kp cannot read nft-json input yet', source: {path: src.path, line: 1}}],
  }
}
