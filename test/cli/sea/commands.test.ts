import {readdirSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {SEA_COMMANDS} from '../../../src/cli/sea/commands.js'
import {ROOT} from '../../helpers/run-cli.js'

describe("the single executable's command map", () => {
  it('holds every command of src/commands, under its file name', async () => {
    const files = readdirSync(`${ROOT}src/commands`).filter((f) => f.endsWith('.ts'))
    const ids = files.map((f) => f.replace(/\.ts$/, ''))
    const table = Object.keys(SEA_COMMANDS)
    const missing = ids.filter((id) => !table.includes(id))
    expect(
      missing,
      'commands missing from src/cli/sea/commands.ts (the single executable)',
    ).toEqual([])
    expect(table.sort()).toEqual(ids.sort())
    for (const id of ids) {
      const file = `${ROOT}src/commands/${id}.ts`
      const module = (await import(/* @vite-ignore */ file)) as {default: unknown}
      expect(SEA_COMMANDS[id as keyof typeof SEA_COMMANDS]).toBe(module.default)
    }
  })
})
