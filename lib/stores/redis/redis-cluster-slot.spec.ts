import { clusterSlotOf } from './redis-cluster-slot';

describe('clusterSlotOf', () => {
  it('answers the slots the cluster specification gives', () => {
    // The specification's CRC16 check value: "123456789" -> 0x31C3 (12739).
    expect(clusterSlotOf('123456789')).toBe(0x31c3);
    // Values CLUSTER KEYSLOT answers on Redis 7.
    expect(clusterSlotOf('foo')).toBe(12182);
    expect(clusterSlotOf('bar')).toBe(5061);
    expect(clusterSlotOf('')).toBe(0);
  });

  it('hashes only the hash tag when there is one', () => {
    expect(clusterSlotOf('{user1000}.following')).toBe(clusterSlotOf('user1000'));
    expect(clusterSlotOf('{user1000}.followers')).toBe(clusterSlotOf('user1000'));
    // The first { and the first } after it; an empty tag hashes the whole key.
    expect(clusterSlotOf('foo{}{bar}')).toBe(clusterSlotOf(Buffer.from('foo{}{bar}')));
    expect(clusterSlotOf('foo{{bar}}zap')).toBe(clusterSlotOf('{bar'));
    expect(clusterSlotOf('foo{bar}{zap}')).toBe(clusterSlotOf('bar'));
  });

  it('hashes bytes (compact keys) as Redis does', () => {
    const digest = Buffer.from('68bb093360f80f34447677e0', 'hex');
    expect(clusterSlotOf(digest)).toBeGreaterThanOrEqual(0);
    expect(clusterSlotOf(digest)).toBeLessThan(16_384);
    expect(clusterSlotOf(Buffer.from('foo'))).toBe(clusterSlotOf('foo'));
  });
});
