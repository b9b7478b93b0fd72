import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PriorityQueue, type QueueEntry, type QueuePolicy } from './priority-queue.js';

interface Named extends QueueEntry {
  readonly name: string;
}

const NO_POLICY: QueuePolicy = { timeoutAction: 'REJECT', defaultTimeoutUs: 0, allowTimeoutOverride: false, maxQueueSize: 0 };
const entry = (name: string, deadlineUs = Number.POSITIVE_INFINITY): Named => ({ name, enqueuedUs: 0, deadlineUs });
const names = (entries: Iterable<Named>): string[] => [...entries].map((queued) => queued.name);

test('levels: priority 0, absent or beyond the levels is the default level; without levels everything is level 1', () => {
  const queue = new PriorityQueue<Named>({ priorityLevels: 3, defaultPriorityLevel: 2, defaultQueuePolicy: NO_POLICY, priorityQueuePolicies: new Map() });
  assert.deepEqual([queue.levelOf(1), queue.levelOf(3), queue.levelOf(0), queue.levelOf(undefined), queue.levelOf(4)], [1, 3, 2, 2, 2]);
  const single = new PriorityQueue<Named>({ priorityLevels: 0, defaultPriorityLevel: 0, defaultQueuePolicy: NO_POLICY, priorityQueuePolicies: new Map() });
  assert.deepEqual([single.levelOf(1), single.levelOf(7), single.levelOf(undefined)], [1, 1, 1]);
});

test('each level has its own policy, the default one where none is given; without levels only the default applies', () => {
  const bounded: QueuePolicy = { ...NO_POLICY, maxQueueSize: 4 };
  const policies = new Map([[2, bounded]]);
  const queue = new PriorityQueue<Named>({ priorityLevels: 2, defaultPriorityLevel: 1, defaultQueuePolicy: NO_POLICY, priorityQueuePolicies: policies });
  assert.deepEqual([queue.policyOf(1), queue.policyOf(2)], [NO_POLICY, bounded]);
  const single = new PriorityQueue<Named>({ priorityLevels: 0, defaultPriorityLevel: 0, defaultQueuePolicy: NO_POLICY, priorityQueuePolicies: new Map([[1, bounded]]) });
  assert.equal(single.policyOf(1), NO_POLICY);
});

test("deadlines: a request's timeout only shortens the default, and only when overriding is allowed", () => {
  const deadlineAt = (policy: Partial<QueuePolicy>, requestTimeoutUs: number | undefined): number =>
    new PriorityQueue<Named>({ priorityLevels: 0, defaultPriorityLevel: 0, defaultQueuePolicy: { ...NO_POLICY, ...policy }, priorityQueuePolicies: new Map() }).deadlineOf(
      1,
      requestTimeoutUs,
      100,
    );
  assert.equal(deadlineAt({ defaultTimeoutUs: 1000, allowTimeoutOverride: true }, 300), 400);
  assert.equal(deadlineAt({ defaultTimeoutUs: 1000, allowTimeoutOverride: true }, 5000), 1100);
  assert.equal(deadlineAt({ defaultTimeoutUs: 1000, allowTimeoutOverride: true }, undefined), 1100);
  assert.equal(deadlineAt({ defaultTimeoutUs: 1000, allowTimeoutOverride: false }, 300), 1100);
  assert.equal(deadlineAt({ defaultTimeoutUs: 0, allowTimeoutOverride: true }, 300), Number.POSITIVE_INFINITY);
});

test('entries leave by level, each level’s delayed ones last; remove and clear take them out', () => {
  const queue = new PriorityQueue<Named>({
    priorityLevels: 2,
    defaultPriorityLevel: 2,
    defaultQueuePolicy: { ...NO_POLICY, timeoutAction: 'DELAY' },
    priorityQueuePolicies: new Map(),
  });
  queue.push(2, entry('low'));
  queue.push(1, entry('late', 50));
  queue.push(1, entry('high'));
  assert.equal(queue.nextDeadlineUs, 50);
  queue.expire(50, () => assert.fail('DELAY rejects nothing'));
  assert.deepEqual(names(queue.ordered()), ['high', 'late', 'low']);
  assert.equal(queue.nextDeadlineUs, Number.POSITIVE_INFINITY, 'a delayed entry has no deadline left');
  assert.deepEqual([queue.size, queue.waitingAt(1), queue.waitingAt(2)], [3, 2, 1]);
  queue.remove([...queue.ordered()].filter((queued) => queued.name === 'high'));
  assert.deepEqual(names(queue.ordered()), ['late', 'low']);
  assert.deepEqual(names(queue.clear()), ['late', 'low']);
  assert.equal(queue.size, 0);
});

test('timeout REJECT: entries at or past their deadline leave the queue through onRejected, the others stay', () => {
  const queue = new PriorityQueue<Named>({ priorityLevels: 0, defaultPriorityLevel: 0, defaultQueuePolicy: NO_POLICY, priorityQueuePolicies: new Map() });
  queue.push(1, entry('early', 10));
  queue.push(1, entry('on-time', 20));
  queue.push(1, entry('later', 21));
  const rejected: string[] = [];
  queue.expire(20, (queued, nowUs) => rejected.push(`${queued.name}@${nowUs}`));
  assert.deepEqual(rejected, ['early@20', 'on-time@20']);
  assert.deepEqual(names(queue.ordered()), ['later']);
  assert.equal(queue.nextDeadlineUs, 21);
});
