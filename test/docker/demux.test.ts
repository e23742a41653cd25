/** The attach stream decoder, fed frames split and packed in every way the engine may send them. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AttachDemuxer, LineSplitter } from '../../src/runtime/docker/demux.js';

function frame(type: number, text: string | Buffer): Buffer {
  const payload = typeof text === 'string' ? Buffer.from(text) : text;
  const head = Buffer.alloc(8);
  head[0] = type;
  head.writeUInt32BE(payload.length, 4);
  return Buffer.concat([head, payload]);
}

describe('AttachDemuxer', () => {
  it('separates stdout and stderr, whatever the chunking', () => {
    const euro = Buffer.from('€');
    const all = Buffer.concat([frame(1, '{"a":1}\n{"b"'), frame(2, 'warn\n'), frame(1, Buffer.concat([Buffer.from(':2}'), euro.subarray(0, 1)])), frame(1, Buffer.concat([euro.subarray(1), Buffer.from('\n')]))]);
    for (const size of [1, 3, 7, 8, 9, 64, all.length]) {
      let out = '';
      let err = '';
      const d = new AttachDemuxer((t) => (out += t), (t) => (err += t));
      for (let i = 0; i < all.length; i += size) d.push(all.subarray(i, i + size));
      assert.equal(out, '{"a":1}\n{"b":2}€\n', `chunk size ${size}`);
      assert.equal(err, 'warn\n');
    }
  });

  it('LineSplitter joins partial lines and strips CR', () => {
    const lines: string[] = [];
    const s = new LineSplitter((l) => lines.push(l));
    s.push('ab');
    s.push('c\r\nde');
    s.push('f\n');
    s.push('tail');
    s.flush();
    assert.deepEqual(lines, ['abc', 'def', 'tail']);
  });
});
