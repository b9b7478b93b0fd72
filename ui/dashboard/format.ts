const number = (digits: number): Intl.NumberFormat => new Intl.NumberFormat('en', { maximumFractionDigits: digits });
const integer = number(0);
const decimal = number(1);
const fine = number(2);

export const formatCount = (count: number): string => integer.format(count);

export const formatRate = (perS: number): string => (perS >= 100 ? integer : perS >= 1 ? decimal : fine).format(perS);

/** Microseconds as µs, ms or s, whichever reads best. */
export function formatUs(us: number | undefined): string {
  if (us === undefined) return '–';
  if (us < 1000) return `${integer.format(us)} µs`;
  if (us < 1_000_000) return `${decimal.format(us / 1000)} ms`;
  return `${fine.format(us / 1_000_000)} s`;
}

export const formatMiB = (bytes: number): string => `${decimal.format(bytes / 2 ** 20)} MiB`;

export function formatUptime(seconds: number): string {
  const s = Math.floor(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3600)} h`;
}

export const formatTime = (ms: number): string => new Date(ms).toLocaleTimeString('en-GB');
