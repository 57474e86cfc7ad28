// Types for the benchmark's ipvsadm generator (a plain .mjs script the tests import).
export function realServerLine(
  addrPort: string,
  forward: string,
  weight: number,
  active: number,
  inactive: number,
): string
export function generateIpvsadmList(
  path: string,
  opts: {services: number; endpointsPerService: number},
): Promise<{lines: number; bytes: number}>
