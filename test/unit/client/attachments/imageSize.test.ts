/** Image dimensions from file headers, in plain Node. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { imageSize } from '../../../../client/src/attachments/imageSize';
describe('Attachment previews: image dimensions', () => {
	it('reads the dimensions of PNG, GIF, BMP and JPEG headers', () => {
		const png = Buffer.alloc(24);
		png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
		png.writeUInt32BE(640, 16);
		png.writeUInt32BE(480, 20);
		assert.deepEqual(imageSize(png), { width: 640, height: 480 });
		const gif = Buffer.from('GIF89a\x20\x00\x10\x00', 'latin1');
		assert.deepEqual(imageSize(gif), { width: 32, height: 16 });
		const bmp = Buffer.alloc(26);
		bmp.write('BM', 0, 'latin1');
		bmp.writeInt32LE(7, 18);
		bmp.writeInt32LE(-9, 22);
		assert.deepEqual(imageSize(bmp), { width: 7, height: 9 });
		const jpeg = Buffer.from([
			0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0x00, 0x00, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x00, 0x78, 0x00, 0xa0, 0x03,
		]);
		assert.deepEqual(imageSize(jpeg), { width: 160, height: 120 });
		assert.equal(imageSize(Buffer.from('not an image')), undefined);
	});
});
