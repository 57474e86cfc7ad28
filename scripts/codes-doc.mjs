// Writes docs/codes.md from the catalogues in src/catalog/ (npm run docs:codes; runs under tsx).
import {writeFileSync} from 'node:fs'
import {codesDocument} from '../src/catalog/doc.ts'

writeFileSync(new URL('../docs/codes.md', import.meta.url), codesDocument())
