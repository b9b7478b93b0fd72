import assert from 'node:assert/strict';
import { readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { chooseRegionMemoryProvider } from './region-memory.js';
import { SharedMemoryRegistry } from './shared-memory-registry.js';

/** Creates /dev/shm/<name> as shm_open would, filled with bytes 0, 1, 2, ... (mod 256). */
function createObject(name: string, size: number): string {
  writeFileSync(`/dev/shm/${name}`, Uint8Array.from({ length: size }, (_, index) => index % 256));
  return `/${name}`;
}

const fdTargets = (): string[] =>
  readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      return [readlinkSync(`/proc/self/fd/${fd}`)];
    } catch {
      return [];
    }
  });

for (const isFallbackForced of [false, true]) {
  const { provider } = chooseRegionMemoryProvider({ isFallbackForced });
  describe(`SharedMemoryRegistry over ${provider.kind}`, () => {
    const name = `nereid-registry-test-${process.pid}-${provider.kind}`;

    test('registers, reads and writes at an offset, lists and unregisters', (t) => {
      const key = createObject(name, 10_000);
      t.after(() => rmSync(`/dev/shm/${name}`, { force: true }));
      const registry = new SharedMemoryRegistry({ provider, isAllowed: true });
      registry.register('r', key, 4099, 100);
      assert.deepEqual(registry.status(), [{ name: 'r', key, offset: 4099, byteSize: 100 }]);
      assert.deepEqual(registry.status('r'), [{ name: 'r', key, offset: 4099, byteSize: 100 }]);
      const lease = registry.acquire('r', 10, 4);
      assert.deepEqual([...lease.read()], [(4109) % 256, 4110 % 256, 4111 % 256, 4112 % 256]);
      lease.write(Uint8Array.of(9, 8, 7, 6));
      lease.release();
      assert.deepEqual([...readFileSync(`/dev/shm/${name}`).subarray(4109, 4113)], [9, 8, 7, 6]);
      registry.unregister('r');
      assert.deepEqual(registry.status(), []);
      assert.equal(registry.mappedCount, 0);
    });

    test("Triton's statuses and messages for each failure", (t) => {
      const key = createObject(name, 64);
      t.after(() => rmSync(`/dev/shm/${name}`, { force: true }));
      const registry = new SharedMemoryRegistry({ provider, isAllowed: true });
      registry.register('r', key, 0, 64);
      assert.throws(() => registry.register('r', key, 0, 8), { status: 'ALREADY_EXISTS', message: "shared memory region 'r' already in manager" });
      assert.throws(() => registry.register('s', '/nereid-no-such-object', 0, 8), { status: 'INTERNAL', message: "Unable to open shared memory region: '/nereid-no-such-object'" });
      assert.throws(() => registry.register('s', key, 60, 8), { status: 'INVALID_ARG', message: "failed to register shared memory region 's': invalid args" });
      assert.throws(() => registry.register('s', 'triton_python_backend_shm_region_1', 0, 8), {
        status: 'INVALID_ARG',
        message: "cannot register shared memory region 's' with key 'triton_python_backend_shm_region_1' as the key contains the reserved prefix 'triton_python_backend_shm_region_'",
      });
      assert.throws(() => registry.status('s'), { status: 'NOT_FOUND', message: "Unable to find system shared memory region: 's'" });
      assert.throws(() => registry.acquire('s', 0, 8), { status: 'NOT_FOUND', message: "Unable to find shared memory region: 's'" });
      assert.throws(() => registry.acquire('r', 64, 0), { status: 'INVALID_ARG', message: "Invalid offset for shared memory region: 'r'" });
      assert.throws(() => registry.acquire('r', 60, 8), { status: 'INVALID_ARG', message: "Invalid offset + byte size for shared memory region: 'r'" });
      registry.unregister('never-registered');
      registry.unregisterAll();
      assert.equal(registry.mappedCount, 0);
      const disabled = new SharedMemoryRegistry({ provider, isAllowed: false });
      const refusal = { status: 'UNAVAILABLE', message: "Client shared memory is disabled. Start the server with '--allow-client-shm=true' to enable." };
      assert.throws(() => disabled.register('r', key, 0, 8), refusal);
      assert.throws(() => disabled.unregister('r'), refusal);
      assert.throws(() => disabled.unregisterAll(), refusal);
      disabled.close();
      assert.deepEqual(disabled.status(), []);
    });

    test('a region unregistered while leased stays listed and usable until its last lease is released, then goes, as in Triton', (t) => {
      const key = createObject(name, 4096);
      t.after(() => rmSync(`/dev/shm/${name}`, { force: true }));
      const registry = new SharedMemoryRegistry({ provider, isAllowed: true });
      registry.register('r', key, 0, 4096);
      const first = registry.acquire('r', 0, 4);
      registry.unregister('r');
      assert.deepEqual(registry.status(), [{ name: 'r', key, offset: 0, byteSize: 4096 }]);
      assert.throws(() => registry.register('r', key, 0, 16), { status: 'ALREADY_EXISTS', message: "shared memory region 'r' already in manager" });
      const second = registry.acquire('r', 4, 4);
      assert.deepEqual([...first.read()], [0, 1, 2, 3]);
      first.release();
      first.release();
      assert.deepEqual(registry.status('r'), [{ name: 'r', key, offset: 0, byteSize: 4096 }]);
      assert.deepEqual([...second.read()], [4, 5, 6, 7]);
      second.release();
      assert.deepEqual(registry.status(), []);
      assert.equal(registry.mappedCount, 0);
      registry.register('r', key, 0, 16);
      registry.unregisterAll();
      assert.equal(registry.mappedCount, 0);
    });

    test('status lists regions by name; offsets and sizes past 2^53 are checked in uint64, with Triton\'s overflow message', (t) => {
      const key = createObject(name, 64);
      t.after(() => rmSync(`/dev/shm/${name}`, { force: true }));
      const registry = new SharedMemoryRegistry({ provider, isAllowed: true });
      registry.register('zz', key, 0, 64);
      registry.register('aa', key, 0, 32);
      assert.deepEqual(
        registry.status().map((region) => region.name),
        ['aa', 'zz'],
      );
      assert.throws(() => registry.register('s', key, 0, 2n ** 64n - 1n), { status: 'INVALID_ARG', message: "failed to register shared memory region 's': invalid args" });
      assert.throws(() => registry.acquire('zz', 2n ** 64n - 32n, 64), { status: 'INVALID_ARG', message: "Invalid offset for shared memory region: 'zz'" });
      assert.throws(() => registry.acquire('zz', 32, 2n ** 64n - 32n), {
        status: 'INVALID_ARG',
        message: "Integer overflow detected: byte_size (18446744073709551584) + offset (32) exceeds maximum value (18446744073709551615) for region 'zz'",
      });
      registry.unregisterAll();
    });

    test('10,000 registrations leave no descriptor and no mapping behind', (t) => {
      const key = createObject(name, 8192);
      t.after(() => rmSync(`/dev/shm/${name}`, { force: true }));
      const registry = new SharedMemoryRegistry({ provider, isAllowed: true });
      const isOurs = (line: string): boolean => line.includes(`/dev/shm/${name}`);
      const before = { fds: fdTargets().filter(isOurs).length, maps: readFileSync('/proc/self/maps', 'utf8').split('\n').filter(isOurs).length };
      assert.deepEqual(before, { fds: 0, maps: 0 });
      for (let index = 0; index < 10_000; index++) {
        registry.register('r', key, index % 8000, 100);
        const lease = registry.acquire('r', 0, 100);
        assert.equal(lease.read()[0], (index % 8000) % 256);
        lease.release();
        registry.unregister('r');
      }
      const after = { fds: fdTargets().filter(isOurs).length, maps: readFileSync('/proc/self/maps', 'utf8').split('\n').filter(isOurs).length };
      assert.deepEqual(after, { fds: 0, maps: 0 });
    });
  });
}
