/**
 * Colour for human output: only on a terminal, never with NO_COLOR or --no-color (docs/architecture.md).
 * Views never use colour as the only signal: every coloured word is also written out.
 */
import {Chalk, type ChalkInstance, type ColorSupportLevel, supportsColor} from 'chalk'

export type Style = ChalkInstance

/** `available` is the colour depth the terminal supports (chalk's detection, FORCE_COLOR=0 included). */
export function outputStyle(
  noColorFlag: boolean,
  stream: {isTTY?: boolean} = process.stdout,
  available: ColorSupportLevel = supportsColor ? supportsColor.level : 0,
): Style {
  const disabled = noColorFlag || (process.env.NO_COLOR ?? '') !== '' || !stream.isTTY
  return new Chalk({level: disabled ? 0 : available})
}

/** A style that never colours, for tests and for text that is not going to a terminal. */
export const plainStyle: Style = new Chalk({level: 0})
