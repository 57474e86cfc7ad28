/**
 * kubectl's `-o`: `json` (the same document as --json), `yaml` (that document as YAML), `table`
 * (the text view) and `wide` (the text view with more detail: every endpoint in `kp list`, the
 * rule lines in `kp explain`).
 */
export const OUTPUT_FORMATS = ['json', 'yaml', 'table', 'wide'] as const
export type OutputFormat = (typeof OUTPUT_FORMATS)[number]

const isFormat = (v: string | undefined): v is OutputFormat =>
  (OUTPUT_FORMATS as readonly string[]).includes(v ?? '')

/**
 * The -o value in a raw argv (the last one wins, as oclif parses it), before or without parsing:
 * oclif asks whether output is JSON (jsonEnabled) also for an error raised while parsing.
 */
export function outputFormatOf(argv: readonly string[]): OutputFormat | null {
  let found: OutputFormat | null = null
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === '--') break
    let value: string | undefined
    if (a === '-o' || a === '--output') value = argv[++i]
    else if (a.startsWith('--output=')) value = a.slice('--output='.length)
    else if (a.startsWith('-o')) value = a.slice(a[2] === '=' ? 3 : 2)
    else continue
    if (isFormat(value)) found = value
  }
  return found
}

/** Writes a document as YAML; the yaml library is loaded only when -o yaml asks for it. */
export async function yamlWriter(): Promise<(doc: unknown) => void> {
  const {stringify} = await import('yaml')
  // aliasDuplicateObjects off: a state repeats equal objects, and anchors would only confuse a reader.
  return (doc) => process.stdout.write(stringify(doc, {aliasDuplicateObjects: false}))
}
