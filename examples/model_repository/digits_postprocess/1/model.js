// Picks the most likely class of each batch item: its label and its probability.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

export default class DigitsPostprocess {
  async initialize(args) {
    const text = await readFile(join(args.modelRepository, 'labels.txt'), 'utf8');
    this.labels = text.split('\n').filter((line) => line !== '');
  }

  execute(requests) {
    return requests.map((request) => {
      const probabilities = request.input('PROBABILITIES');
      const [batch, classes] = probabilities.shape;
      const labels = [];
      const scores = new Float32Array(batch);
      for (let item = 0; item < batch; item++) {
        const row = probabilities.data.subarray(item * classes, (item + 1) * classes);
        let best = 0;
        for (let k = 1; k < classes; k++) if (row[k] > row[best]) best = k;
        labels.push(this.labels[best] ?? String(best));
        scores[item] = row[best];
      }
      return {
        outputs: [
          { name: 'LABEL', datatype: 'BYTES', shape: [batch, 1], data: labels },
          { name: 'SCORE', datatype: 'FP32', shape: [batch, 1], data: scores },
        ],
      };
    });
  }
}
