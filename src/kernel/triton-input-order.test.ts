import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { hashString, tritonInputOrder } from './triton-input-order.js';

test("std::hash<std::string> as GCC's libstdc++ computes it", () => {
  // Printed by std::hash<std::string>{}(...) built with g++ 12.
  assert.equal(hashString(''), 6142509188972423790n);
  assert.equal(hashString('INPUT0'), 2526639154658133543n);
  assert.equal(hashString('abcdefghij'), 18042067762304121004n);
});

test("the order of libstdc++'s unordered_map, for the lists in test/fixtures/unordered_map_orders.json", () => {
  const lists = JSON.parse(readFileSync(new URL('../../test/fixtures/unordered_map_orders.json', import.meta.url), 'utf8')) as Array<{ names: string[]; order: number[] }>;
  assert.ok(lists.length > 100);
  for (const { names, order } of lists) assert.deepEqual(tritonInputOrder(names), order, names.join(','));
  // Two inputs: the second first, as qa/L0_input_validation expects of Triton.
  assert.deepEqual(tritonInputOrder(['INPUT0', 'INPUT1']), [1, 0]);
});
