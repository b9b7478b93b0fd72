"""A second process that writes and reads Nereid's system shared memory regions, as tritonclient does:
POSIX shared memory from Python's multiprocessing.shared_memory (shm_open of '/NAME'), registered and
used over HTTP (urllib) and gRPC (grpcio with stubs protoc generated from our .proto files).
test/e2e/shared-memory.test.ts runs it.

Usage: /usr/bin/python3 shm_client.py HTTP_URL GRPC_ADDRESS STUBS_DIR

Prints one JSON object: for each protocol ("http", "grpc") the outcome of each case. A failed call is
recorded as {"status": HTTP_STATUS or gRPC code name, "message": TEXT} so that the test can compare
statuses and Triton's texts; data checks are recorded as booleans with the values seen.
"""

import json
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from multiprocessing import resource_tracker, shared_memory

import numpy as np

import grpc

if len(sys.argv) != 4:
    sys.exit("usage: shm_client.py HTTP_URL GRPC_ADDRESS STUBS_DIR")
HTTP_URL, GRPC_ADDRESS, STUBS_DIR = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, STUBS_DIR)

import grpc_service_pb2 as pb  # noqa: E402  (generated into STUBS_DIR at test time)
import grpc_service_pb2_grpc as pb_grpc  # noqa: E402

TIMEOUT_S = 60
RUN = uuid.uuid4().hex[:8]

# Every data type of the identity models, three elements each.
VALUES = {
    "BOOL": np.array([True, False, True], dtype=np.bool_),
    "UINT8": np.array([0, 7, 255], dtype=np.uint8),
    "UINT16": np.array([0, 300, 65535], dtype=np.uint16),
    "UINT32": np.array([0, 70000, 4294967295], dtype=np.uint32),
    "UINT64": np.array([0, 2**40, 2**64 - 1], dtype=np.uint64),
    "INT8": np.array([-128, 0, 127], dtype=np.int8),
    "INT16": np.array([-32768, 5, 32767], dtype=np.int16),
    "INT32": np.array([-(2**31), 12345, 2**31 - 1], dtype=np.int32),
    "INT64": np.array([-(2**63), 2**53 + 1, 2**63 - 1], dtype=np.int64),
    "FP16": np.array([0.5, -2.0, 65504.0], dtype=np.float16),
    "FP32": np.array([1.5, -0.0, 3.25e38], dtype=np.float32),
    "FP64": np.array([1e-300, -2.5, 1e300], dtype=np.float64),
    "BYTES": [b"", b"abc", "\u00e9t\u00e9".encode()],
}


def serialize_bytes(elements):
    """Triton's BYTES layout: each element's 4-byte little-endian length, then its bytes."""
    return b"".join(len(e).to_bytes(4, "little") + e for e in elements)


def tensor_bytes(datatype):
    value = VALUES[datatype]
    return serialize_bytes(value) if datatype == "BYTES" else value.tobytes()


class Region:
    """A POSIX shared memory object this process creates, as tritonclient's create_shared_memory_region."""

    def __init__(self, label, size):
        self.name = f"nereid_{label}_{RUN}"
        self.key = "/" + self.name
        self.shm = shared_memory.SharedMemory(name=self.name, create=True, size=size)
        # The test unlinks its objects itself; the tracker would warn about them at exit otherwise.
        resource_tracker.unregister(self.shm._name, "shared_memory")
        self.size = size

    def write(self, offset, data):
        self.shm.buf[offset : offset + len(data)] = data

    def read(self, offset, size):
        return bytes(self.shm.buf[offset : offset + size])

    def close(self):
        self.shm.close()
        self.shm.unlink()


# ---------------------------------------------------------------- the two protocols, side by side


class Http:
    name = "http"

    def request(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(HTTP_URL + path, data=data, method=method, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
                text = response.read().decode()
                return json.loads(text) if text else None
        except urllib.error.HTTPError as error:
            text = error.read().decode()
            raise Failure(error.code, json.loads(text).get("error") if text else "")

    def register(self, name, key, byte_size, offset=None):
        body = {"key": key, "byte_size": byte_size}
        if offset is not None:
            body["offset"] = offset
        return self.request("POST", f"/v2/systemsharedmemory/region/{name}/register", body)

    def status(self, name=None):
        path = "/v2/systemsharedmemory/status" if name is None else f"/v2/systemsharedmemory/region/{name}/status"
        return sorted(self.request("GET", path), key=lambda r: r["name"])

    def unregister(self, name=None):
        path = "/v2/systemsharedmemory/unregister" if name is None else f"/v2/systemsharedmemory/region/{name}/unregister"
        return self.request("POST", path, {})

    def infer(self, model, inputs, outputs):
        """inputs: (name, datatype, shape, place); place is ("shm", region, byte_size, offset) or ("data", values)."""
        body_inputs = []
        for name, datatype, shape, place in inputs:
            tensor = {"name": name, "datatype": datatype, "shape": shape}
            if place[0] == "shm":
                tensor["parameters"] = shm_parameters(place)
            else:
                tensor["data"] = place[1]
            body_inputs.append(tensor)
        body_outputs = []
        for name, place in outputs:
            tensor = {"name": name}
            if place is not None:
                tensor["parameters"] = shm_parameters(place)
            body_outputs.append(tensor)
        response = self.request("POST", f"/v2/models/{model}/infer", {"inputs": body_inputs, "outputs": body_outputs})
        return {o["name"]: o for o in response["outputs"]}

    def raw(self, method, path, body):
        return self.request(method, path, body)


def shm_parameters(place):
    _, region, byte_size, offset = place
    parameters = {"shared_memory_region": region, "shared_memory_byte_size": byte_size}
    if offset:
        parameters["shared_memory_offset"] = offset
    return parameters


class Grpc:
    name = "grpc"

    def __init__(self):
        channel = grpc.insecure_channel(GRPC_ADDRESS, options=[("grpc.enable_http_proxy", 0)])
        grpc.channel_ready_future(channel).result(timeout=TIMEOUT_S)
        self.stub = pb_grpc.GRPCInferenceServiceStub(channel)

    def call(self, method, request):
        try:
            return getattr(self.stub, method)(request, timeout=TIMEOUT_S)
        except grpc.RpcError as error:
            raise Failure(error.code().name, error.details())

    def register(self, name, key, byte_size, offset=None):
        self.call("SystemSharedMemoryRegister", pb.SystemSharedMemoryRegisterRequest(name=name, key=key, offset=offset or 0, byte_size=byte_size))

    def status(self, name=None):
        response = self.call("SystemSharedMemoryStatus", pb.SystemSharedMemoryStatusRequest(name=name or ""))
        return sorted(
            ({"name": r.name, "key": r.key, "offset": r.offset, "byte_size": r.byte_size} for r in response.regions.values()),
            key=lambda r: r["name"],
        )

    def unregister(self, name=None):
        self.call("SystemSharedMemoryUnregister", pb.SystemSharedMemoryUnregisterRequest(name=name or ""))

    def infer(self, model, inputs, outputs):
        request = pb.ModelInferRequest(model_name=model)
        for name, datatype, shape, place in inputs:
            tensor = request.inputs.add(name=name, datatype=datatype, shape=shape)
            if place[0] == "shm":
                set_shm_parameters(tensor, place)
            else:
                request.raw_input_contents.append(place[2])
        for name, place in outputs:
            tensor = request.outputs.add(name=name)
            if place is not None:
                set_shm_parameters(tensor, place)
        response = self.call("ModelInfer", request)
        result = {}
        for index, output in enumerate(response.outputs):
            raw = response.raw_output_contents[index] if index < len(response.raw_output_contents) else b""
            result[output.name] = {"name": output.name, "datatype": output.datatype, "shape": list(output.shape), "raw_size": len(raw), "raw": raw}
        return result


def set_shm_parameters(tensor, place):
    _, region, byte_size, offset = place
    tensor.parameters["shared_memory_region"].string_param = region
    tensor.parameters["shared_memory_byte_size"].int64_param = byte_size
    if offset:
        tensor.parameters["shared_memory_offset"].int64_param = offset


class Failure(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


def outcome(function):
    try:
        value = function()
        return {"ok": True} if value is None else value
    except Failure as failure:
        return {"status": failure.status, "message": failure.message}


# ---------------------------------------------------------------- the cases


def case_management(client, result):
    a, b = Region(f"{client.name}_a", 256), Region(f"{client.name}_b", 4096)
    try:
        client.register("a", a.key, 256)
        client.register("b", b.key, 1000, offset=3000)
        result["status_all"] = client.status()
        result["status_one"] = client.status("b")
        client.unregister("a")
        result["status_after_unregister"] = client.status()
        client.register("a", a.key, 128, offset=7)
        client.unregister()
        result["status_after_unregister_all"] = client.status()
        result["unregister_unknown"] = outcome(lambda: client.unregister("never_registered"))
        result["keys"] = {"a": a.key, "b": b.key}
    finally:
        a.close()
        b.close()


def case_all_types(client, result, model):
    """Every data type in one region at odd (unaligned) offsets, outputs into another at the same offsets."""
    inputs, outputs, layout = [], [], {}
    offset = 1
    for datatype in VALUES:
        data = tensor_bytes(datatype)
        layout[datatype] = (offset, data)
        offset += len(data) + 3
    region_in, region_out = Region(f"{client.name}_{model}_in", offset), Region(f"{client.name}_{model}_out", offset)
    try:
        client.register("in", region_in.key, offset)
        client.register("out", region_out.key, offset)
        for datatype, (at, data) in layout.items():
            region_in.write(at, data)
            inputs.append((f"INPUT_{datatype}", datatype, [1, 3], ("shm", "in", len(data), at)))
            outputs.append((f"OUTPUT_{datatype}", ("shm", "out", len(data), at)))
        response = client.infer(model, inputs, outputs)
        result[model] = {
            datatype: {
                "equal": region_out.read(at, len(data)) == data,
                "shape": list(response[f"OUTPUT_{datatype}"]["shape"]),
                "has_data": "data" in response[f"OUTPUT_{datatype}"] or response[f"OUTPUT_{datatype}"].get("raw_size", 0) > 0,
            }
            for datatype, (at, data) in layout.items()
        }
    finally:
        client.unregister()
        region_in.close()
        region_out.close()


def case_mix(client, result):
    """simple: INPUT0 in a region, INPUT1 inline; OUTPUT0 into a region, OUTPUT1 inline."""
    input0 = np.arange(16, dtype=np.int32)
    input1 = np.full(16, 5, dtype=np.int32)
    region = Region(f"{client.name}_mix", 200)
    try:
        client.register("mix", region.key, 200)
        region.write(8, input0.tobytes())
        response = client.infer(
            "simple",
            [
                ("INPUT0", "INT32", [1, 16], ("shm", "mix", 64, 8)),
                ("INPUT1", "INT32", [1, 16], ("data", input1.tolist(), input1.tobytes())),
            ],
            [("OUTPUT0", ("shm", "mix", 64, 100)), ("OUTPUT1", None)],
        )
        inline = response["OUTPUT1"]
        values = inline["data"] if "data" in inline else np.frombuffer(inline["raw"], dtype=np.int32).tolist()
        result["mix"] = {
            "output0": np.frombuffer(region.read(100, 64), dtype=np.int32).tolist(),
            "output1": values,
        }
    finally:
        client.unregister()
        region.close()


def case_errors(client, result):
    region = Region(f"{client.name}_err", 128)
    errors = {}
    try:
        client.register("r", region.key, 128)
        region.write(0, np.arange(32, dtype=np.int32).tobytes())
        errors["duplicate"] = outcome(lambda: client.register("r", region.key, 64))
        errors["bad_key"] = outcome(lambda: client.register("s", f"/nereid_no_such_object_{RUN}", 64))
        errors["past_object"] = outcome(lambda: client.register("s", region.key, 100, offset=64))
        errors["reserved_key"] = outcome(lambda: client.register("s", "triton_python_backend_shm_region_x", 8))
        errors["status_unknown"] = outcome(lambda: client.status("s"))
        simple_outputs = [("OUTPUT0", None), ("OUTPUT1", None)]

        def infer_simple(place0, place1=("shm", "r", 64, 64), outputs=simple_outputs):
            return outcome(lambda: client.infer("simple", [("INPUT0", "INT32", [1, 16], place0), ("INPUT1", "INT32", [1, 16], place1)], outputs) and None)

        errors["infer_unknown_region"] = infer_simple(("shm", "nope", 64, 0))
        errors["infer_byte_size_mismatch"] = infer_simple(("shm", "r", 60, 0))
        errors["infer_offset_past_region"] = infer_simple(("shm", "r", 64, 128))
        errors["infer_past_region"] = infer_simple(("shm", "r", 64, 100))
        errors["output_too_small"] = infer_simple(("shm", "r", 64, 0), outputs=[("OUTPUT0", ("shm", "r", 32, 0)), ("OUTPUT1", None)])
        errors["output_past_region"] = infer_simple(("shm", "r", 64, 0), outputs=[("OUTPUT0", ("shm", "r", 64, 100)), ("OUTPUT1", None)])
        errors["region_unchanged_after_failures"] = np.frombuffer(region.read(0, 128), dtype=np.int32).tolist() == list(range(32))
        if client.name == "http":
            body = lambda params, extra=None: {
                "inputs": [
                    {"name": "INPUT0", "datatype": "INT32", "shape": [1, 16], "parameters": params, **(extra or {})},
                    {"name": "INPUT1", "datatype": "INT32", "shape": [1, 16], "data": list(range(16))},
                ]
            }
            shm = {"shared_memory_region": "r", "shared_memory_byte_size": 64}
            errors["both_data_and_region"] = outcome(lambda: client.raw("POST", "/v2/models/simple/infer", body(shm, {"data": list(range(16))})) and None)
            errors["both_binary_and_region"] = outcome(lambda: client.raw("POST", "/v2/models/simple/infer", body({**shm, "binary_data_size": 64})) and None)
            errors["register_no_key"] = outcome(lambda: client.raw("POST", "/v2/systemsharedmemory/region/s/register", {"byte_size": 8}))
            errors["register_no_byte_size"] = outcome(lambda: client.raw("POST", "/v2/systemsharedmemory/region/s/register", {"key": region.key}))
            errors["register_key_not_string"] = outcome(lambda: client.raw("POST", "/v2/systemsharedmemory/region/s/register", {"key": 5, "byte_size": 8}))
            errors["register_no_region_name"] = outcome(lambda: client.raw("POST", "/v2/systemsharedmemory/register", {"key": region.key, "byte_size": 8}))
            errors["cuda_register"] = outcome(lambda: client.raw("POST", "/v2/cudasharedmemory/region/c/register", {"raw_handle": {"b64": ""}, "device_id": 0, "byte_size": 8}))
            errors["cuda_status"] = outcome(lambda: client.raw("GET", "/v2/cudasharedmemory/status", None))
            errors["cuda_status_one"] = outcome(lambda: client.raw("GET", "/v2/cudasharedmemory/region/c/status", None))
            errors["cuda_unregister"] = outcome(lambda: client.raw("POST", "/v2/cudasharedmemory/unregister", {}))
            # Past 2^53, as qa/L0_shared_memory sends them (test_infer_offset_out_of_bound, test_infer_integer_overflow).
            errors["output_offset_2_64_minus_32"] = infer_simple(("shm", "r", 64, 0), outputs=[("OUTPUT0", ("shm", "r", 64, 2**64 - 32)), ("OUTPUT1", None)])
            errors["output_size_overflow"] = infer_simple(("shm", "r", 64, 0), outputs=[("OUTPUT0", ("shm", "r", 2**64 - 32, 32)), ("OUTPUT1", None)])
            errors["register_size_2_64_minus_1"] = outcome(lambda: client.register("s", region.key, 2**64 - 1))
        else:
            request = pb.ModelInferRequest(model_name="simple")
            tensor = request.inputs.add(name="INPUT0", datatype="INT32", shape=[1, 16])
            set_shm_parameters(tensor, ("shm", "r", 64, 0))
            tensor.contents.int_contents.extend(range(16))
            request.inputs.add(name="INPUT1", datatype="INT32", shape=[1, 16]).contents.int_contents.extend(range(16))
            errors["both_contents_and_region"] = outcome(lambda: client.call("ModelInfer", request) and None)
            missing = pb.ModelInferRequest(model_name="simple")
            missing.inputs.add(name="INPUT0", datatype="INT32", shape=[1, 16]).parameters["shared_memory_region"].string_param = "r"
            errors["region_without_byte_size"] = outcome(lambda: client.call("ModelInfer", missing) and None)
            errors["cuda_register"] = outcome(lambda: client.call("CudaSharedMemoryRegister", pb.CudaSharedMemoryRegisterRequest(name="c", raw_handle=b"", device_id=0, byte_size=8)) and None)
            errors["cuda_status"] = outcome(lambda: {"regions": len(client.call("CudaSharedMemoryStatus", pb.CudaSharedMemoryStatusRequest()).regions)})
            errors["cuda_status_one"] = outcome(lambda: client.call("CudaSharedMemoryStatus", pb.CudaSharedMemoryStatusRequest(name="c")) and None)
            errors["cuda_unregister"] = outcome(lambda: client.call("CudaSharedMemoryUnregister", pb.CudaSharedMemoryUnregisterRequest()) and None)
        result["errors"] = errors
    finally:
        client.unregister()
        region.close()


def case_unregister_during_request(client, result):
    """The slow model holds each request ~300 ms; every region is unregistered while one runs, as
    Triton's qa/L0_shared_memory TestSharedMemoryUnregister does: the regions stay listed and usable
    until the last request holding them ends, then go without another unregister."""
    values = np.linspace(-1, 1, 1000, dtype=np.float32)
    region = Region(f"{client.name}_slow", 8000)
    try:
        client.register("slow_in", region.key, 4000)
        client.register("slow_out", region.key, 4000, offset=4000)
        region.write(0, values.tobytes())
        answers = {}

        def run(label):
            answers[label] = outcome(lambda: client.infer("slow", [("INPUT0", "FP32", [1000], ("shm", "slow_in", 4000, 0))], [("OUTPUT0", ("shm", "slow_out", 4000, 0))]) and None)

        first = threading.Thread(target=run, args=("first",))
        first.start()
        time.sleep(0.1)
        client.unregister()
        status_during = [entry["name"] for entry in client.status()]
        reregister = outcome(lambda: client.register("slow_in", region.key, 4000))
        second = threading.Thread(target=run, args=("second",))
        second.start()
        first.join()
        status_between = [entry["name"] for entry in client.status()]
        second.join()
        result["unregister_during_request"] = {
            "first": answers["first"],
            "second": answers["second"],
            "status_during": status_during,
            "reregister_during": reregister,
            "status_between": status_between,
            "status_after": client.status(),
            "output_equal": region.read(4000, 4000) == values.tobytes(),
            "after": outcome(lambda: client.infer("slow", [("INPUT0", "FP32", [1000], ("shm", "slow_in", 4000, 0))], []) and None),
        }
    finally:
        client.unregister()
        region.close()


def case_ensemble(client, result):
    """ens_two_steps (JavaScript steps): Y = (X + 1) + X, X and Y in one region."""
    x = np.array([[1, 2, 3, 4], [-1, -2, -3, -4]], dtype=np.float32)
    region = Region(f"{client.name}_ens", 64)
    try:
        client.register("ens", region.key, 64)
        region.write(0, x.tobytes())
        response = client.infer("ens_two_steps", [("X", "FP32", [2, 4], ("shm", "ens", 32, 0))], [("Y", ("shm", "ens", 32, 32))])
        result["ensemble"] = {"y": np.frombuffer(region.read(32, 32), dtype=np.float32).tolist(), "shape": list(response["Y"]["shape"])}
    finally:
        client.unregister()
        region.close()


def main():
    result = {}
    for client in (Http(), Grpc()):
        entry = result[client.name] = {}
        case_management(client, entry)
        for model in ("identity_onnx", "identity_js", "identity_py"):
            case_all_types(client, entry, model)
        case_mix(client, entry)
        case_errors(client, entry)
        case_unregister_during_request(client, entry)
        case_ensemble(client, entry)
    print(json.dumps(result))


main()
