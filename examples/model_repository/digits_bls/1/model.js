// Runs pre-processing, the classifier and post-processing by calling the models in the server.
// Each call goes through the called model's scheduler, so calls from many requests batch together.
export default class DigitsBls {
  initialize(args) {
    this.infer = args.infer;
  }

  async call(model, inputs) {
    const response = await this.infer({ model, inputs });
    if (response.error) throw new Error(`${model}: ${response.error.message}`);
    return response;
  }

  async classify(request) {
    const image = request.input('IMAGE');
    const pre = await this.call('digits_preprocess', [{ name: 'IMAGE', datatype: 'UINT8', shape: image.shape, data: image.data }]);
    const pixels = pre.output('INPUT');
    const scores = await this.call('digits', [{ name: 'INPUT', datatype: 'FP32', shape: pixels.shape, data: pixels.data }]);
    const probabilities = scores.output('PROBABILITIES');
    const post = await this.call('digits_postprocess', [{ name: 'PROBABILITIES', datatype: 'FP32', shape: probabilities.shape, data: probabilities.data }]);
    return { outputs: post.outputs };
  }

  execute(requests) {
    // A failed call fails its own request only: the error becomes that request's response.
    return Promise.all(requests.map((request) => this.classify(request).catch((error) => error)));
  }
}
