import { readFile } from 'node:fs/promises';

export interface CpuSample {
  /** Busy share of all cores since the previous sample, 0 to 1. */
  readonly utilization: number;
  readonly memoryTotalBytes: number;
  readonly memoryUsedBytes: number;
}

interface CpuTimes {
  readonly total: number;
  readonly idle: number;
}

async function readCpuTimes(): Promise<CpuTimes> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n', 1)[0]!;
  // cpu  user nice system idle iowait irq softirq steal ...
  const fields = line.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.slice(0, 8).reduce((sum, value) => sum + value, 0);
  return { total, idle: (fields[3] ?? 0) + (fields[4] ?? 0) };
}

async function readMemory(): Promise<{ totalBytes: number; usedBytes: number }> {
  const text = await readFile('/proc/meminfo', 'utf8');
  const kib = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024;
  const totalBytes = kib('MemTotal');
  return { totalBytes, usedBytes: totalBytes - kib('MemAvailable') };
}

/**
 * Samples CPU use and memory from /proc, as Triton's nv_cpu_* metrics do (Linux only; elsewhere the
 * sampler reports nothing). Utilisation is the busy share between two consecutive samples.
 */
export class CpuSampler {
  #previous: CpuTimes | undefined;

  async sample(): Promise<CpuSample | undefined> {
    try {
      const [times, memory] = await Promise.all([readCpuTimes(), readMemory()]);
      const previous = this.#previous;
      this.#previous = times;
      const elapsed = previous === undefined ? 0 : times.total - previous.total;
      const utilization = elapsed > 0 ? 1 - (times.idle - previous!.idle) / elapsed : 0;
      return { utilization: Math.min(1, Math.max(0, utilization)), memoryTotalBytes: memory.totalBytes, memoryUsedBytes: memory.usedBytes };
    } catch {
      return undefined;
    }
  }
}
