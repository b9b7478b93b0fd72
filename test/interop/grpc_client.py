"""A gRPC client for Nereid that this project did not write the wire code of: Python's grpcio with
stubs that protoc generated from our .proto files. test/e2e/grpc-interop.test.ts runs it.

Usage: /usr/bin/python3 grpc_client.py HOST:PORT STUBS_DIR

STUBS_DIR holds grpc_service_pb2.py, grpc_service_pb2_grpc.py and model_config_pb2.py, made by
`protoc --python_out --grpc_out` (this script generates nothing). It makes the calls below against
the example repository's `simple` model (INT32 add/sub over [1,16]) and prints one JSON object on
stdout. A failed call is recorded as {"error": {"code": NAME, "details": TEXT}} in its place, so the
test shows what went wrong instead of a traceback.
"""

import json
import struct
import sys

import grpc

if len(sys.argv) != 3:
    sys.exit("usage: grpc_client.py HOST:PORT STUBS_DIR")
ADDRESS, STUBS_DIR = sys.argv[1], sys.argv[2]
sys.path.insert(0, STUBS_DIR)

import grpc_service_pb2 as pb  # noqa: E402  (generated into STUBS_DIR at test time)
import grpc_service_pb2_grpc as pb_grpc  # noqa: E402

TIMEOUT_S = 20
ELEMENTS = 16

# The same inputs as the TypeScript test expects.
RAW_INPUT0 = list(range(ELEMENTS))
RAW_INPUT1 = [1] * ELEMENTS
TYPED_INPUT0 = [10 * i - 70 for i in range(ELEMENTS)]
# Large and negative values: negative int32 travels as a 10-byte varint in int_contents.
TYPED_INPUT1 = [(-1) ** i * (i * 100_000_000 + 7) for i in range(ELEMENTS)]
STREAM_INPUT0 = [3 * i for i in range(ELEMENTS)]
STREAM_INPUT1 = [-i for i in range(ELEMENTS)]


def int32_bytes(values):
    """Little-endian int32, the layout tritonclient sends (numpy's tobytes on x86/ARM)."""
    return struct.pack("<%di" % len(values), *values)


def rpc_error(error):
    return {"error": {"code": error.code().name, "details": error.details()}}


def input_tensor(name, shape, contents=None):
    tensor = pb.ModelInferRequest.InferInputTensor(name=name, datatype="INT32", shape=shape)
    if contents is not None:
        tensor.contents.int_contents.extend(contents)
    return tensor


def raw_request(request_id, input0, input1, shape=None, model="simple"):
    shape = shape or [1, len(input0)]
    request = pb.ModelInferRequest(model_name=model, id=request_id)
    request.inputs.extend([input_tensor("INPUT0", shape), input_tensor("INPUT1", shape)])
    request.raw_input_contents.extend([int32_bytes(input0), int32_bytes(input1)])
    return request


def typed_request(request_id, input0, input1):
    shape = [1, len(input0)]
    request = pb.ModelInferRequest(model_name="simple", id=request_id)
    request.inputs.extend([input_tensor("INPUT0", shape, input0), input_tensor("INPUT1", shape, input1)])
    # Ask for both outputs by name, as tritonclient does when given InferRequestedOutput objects.
    request.outputs.extend([
        pb.ModelInferRequest.InferRequestedOutputTensor(name="OUTPUT0"),
        pb.ModelInferRequest.InferRequestedOutputTensor(name="OUTPUT1"),
    ])
    return request


def describe_response(response):
    """Outputs decoded from raw_output_contents (what tritonclient reads), else from typed contents."""
    outputs = []
    for index, output in enumerate(response.outputs):
        entry = {"name": output.name, "datatype": output.datatype, "shape": list(output.shape)}
        if index < len(response.raw_output_contents):
            raw = response.raw_output_contents[index]
            entry["encoding"] = "raw"
            entry["data"] = list(struct.unpack("<%di" % (len(raw) // 4), raw)) if len(raw) % 4 == 0 else None
            entry["byte_size"] = len(raw)
        else:
            entry["encoding"] = "contents"
            entry["data"] = list(output.contents.int_contents)
        outputs.append(entry)
    return {
        "model_name": response.model_name,
        "model_version": response.model_version,
        "id": response.id,
        "raw_output_contents": len(response.raw_output_contents),
        "outputs": outputs,
    }


def tensor_metadata(tensors):
    return [{"name": t.name, "datatype": t.datatype, "shape": list(t.shape)} for t in tensors]


def main():
    result = {}
    # Loopback only: never route through a proxy named in the environment.
    channel = grpc.insecure_channel(ADDRESS, options=[("grpc.enable_http_proxy", 0)])
    grpc.channel_ready_future(channel).result(timeout=TIMEOUT_S)
    stub = pb_grpc.GRPCInferenceServiceStub(channel)

    def call(key, function):
        try:
            result[key] = function()
        except grpc.RpcError as error:
            result[key] = rpc_error(error)

    call("server_live", lambda: {"live": stub.ServerLive(pb.ServerLiveRequest(), timeout=TIMEOUT_S).live})
    call("server_ready", lambda: {"ready": stub.ServerReady(pb.ServerReadyRequest(), timeout=TIMEOUT_S).ready})

    def server_metadata():
        response = stub.ServerMetadata(pb.ServerMetadataRequest(), timeout=TIMEOUT_S)
        return {"name": response.name, "version": response.version, "extensions": list(response.extensions)}

    call("server_metadata", server_metadata)

    def model_metadata():
        response = stub.ModelMetadata(pb.ModelMetadataRequest(name="simple"), timeout=TIMEOUT_S)
        return {
            "name": response.name,
            "versions": list(response.versions),
            "platform": response.platform,
            "inputs": tensor_metadata(response.inputs),
            "outputs": tensor_metadata(response.outputs),
        }

    call("model_metadata", model_metadata)

    def model_config():
        config = stub.ModelConfig(pb.ModelConfigRequest(name="simple"), timeout=TIMEOUT_S).config
        return {
            "name": config.name,
            "platform": config.platform,
            "max_batch_size": config.max_batch_size,
            "inputs": [{"name": i.name, "dims": list(i.dims)} for i in config.input],
            "outputs": [{"name": o.name, "dims": list(o.dims)} for o in config.output],
        }

    call("model_config", model_config)

    call("infer_raw", lambda: describe_response(
        stub.ModelInfer(raw_request("raw-1", RAW_INPUT0, RAW_INPUT1), timeout=TIMEOUT_S)))
    call("infer_typed", lambda: describe_response(
        stub.ModelInfer(typed_request("typed-1", TYPED_INPUT0, TYPED_INPUT1), timeout=TIMEOUT_S)))

    def stream():
        # All three requests go out before any response is read, so they are in flight together on
        # one stream; the second has 15 elements per input where the model wants 16.
        requests = [
            raw_request("stream-1", RAW_INPUT0, RAW_INPUT1),
            raw_request("stream-2", RAW_INPUT0[:15], RAW_INPUT1[:15], shape=[1, 15]),
            typed_request("stream-3", STREAM_INPUT0, STREAM_INPUT1),
        ]
        responses = []
        # Reads until the server ends the stream (after the client half-closes), so a server that
        # leaves the stream open shows up as DEADLINE_EXCEEDED.
        for response in stub.ModelStreamInfer(iter(requests), timeout=TIMEOUT_S):
            entry = {"id": response.infer_response.id, "error_message": response.error_message}
            if not response.error_message:
                entry.update(describe_response(response.infer_response))
            responses.append(entry)
        return {"responses": responses}

    call("stream", stream)

    try:
        stub.ModelInfer(raw_request("nope-1", RAW_INPUT0, RAW_INPUT1, model="nope"), timeout=TIMEOUT_S)
        result["unknown_model"] = {"code": "OK", "details": ""}
    except grpc.RpcError as error:
        result["unknown_model"] = {"code": error.code().name, "details": error.details()}

    channel.close()
    json.dump(result, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
