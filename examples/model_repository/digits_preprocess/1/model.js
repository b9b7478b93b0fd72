// Scales 8x8 images from 0..255 to the 0..16 range of the digits classifier, flattened to 64 values.
const SCALE = 16 / 255;

export default class DigitsPreprocess {
  execute(requests) {
    return requests.map((request) => {
      const image = request.input('IMAGE');
      const batch = image.shape[0];
      const scaled = new Float32Array(image.data.length);
      for (let i = 0; i < scaled.length; i++) scaled[i] = image.data[i] * SCALE;
      return { outputs: [{ name: 'INPUT', datatype: 'FP32', shape: [batch, 64], data: scaled }] };
    });
  }
}
