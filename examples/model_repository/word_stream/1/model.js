// Streams the words of text_input back one response at a time, then sends the final flag.
export default class WordStream {
  execute(requests) {
    for (const request of requests) {
      const text = request.input('text_input').data[0];
      const sender = request.responseSender;
      for (const word of text.split(/\s+/).filter((w) => w !== '')) {
        sender.send({ outputs: [{ name: 'text_output', datatype: 'BYTES', shape: [1], data: [word] }] });
      }
      sender.send(undefined, { final: true });
    }
  }
}
