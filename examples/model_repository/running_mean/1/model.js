// The running mean of a sequence's VALUEs. The server feeds back STATE_OUT as the next request's
// STATE_IN ([sum, count], zeros when the sequence starts), so the model itself keeps nothing.
export default class RunningMean {
  execute(requests) {
    return requests.map((request) => {
      const isStart = request.input('START').data[0] === 1;
      const [sum, count] = isStart ? [0, 0] : request.input('STATE_IN').data;
      const value = request.input('VALUE').data[0];
      const next = [sum + value, count + 1];
      return {
        outputs: [
          { name: 'MEAN', datatype: 'FP32', shape: [1, 1], data: [next[0] / next[1]] },
          { name: 'STATE_OUT', datatype: 'FP32', shape: [1, 2], data: next },
        ],
      };
    });
  }
}
