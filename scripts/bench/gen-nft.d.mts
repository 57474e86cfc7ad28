// Types for the benchmark's nftables generator (a plain .mjs script the tests import).
export function nftChainBase(name: string): string
export function lineWriter(path: string): {
  emit(line: string): void
  close(): Promise<{lines: number; bytes: number}>
}
export function generateNftTransaction(
  path: string,
  opts: {services: number; endpointsPerService: number},
): Promise<{lines: number; bytes: number}>
