#!/usr/bin/python3
"""The control group of Triton's users: one FastAPI service per model, the model in PyTorch.

One uvicorn process (the default) serving POST /v2/models/<name>/infer in the KServe v2 binary data
format (JSON header of Inference-Header-Content-Length bytes, then the raw FP32 input; the reply the
same way), plus GET /v2/health/ready. The weights are the state dict make_models.py saved, so the
model computes what the ONNX file served by Nereid computes.

Requirements (Debian 12): apt-get install -y python3-fastapi python3-uvicorn python3-torch python3-torchvision
(python3-uvloop and python3-httptools too for uvicorn's faster loop and parser, as `pip install
uvicorn[standard]` brings them; uvicorn picks them up when installed).

  /usr/bin/python3 bench/batching/fastapi_service.py --model resnet18 [--port 8002] [--work bench/batching/.work]

Choices, each the common way of writing such a service:
- the endpoint is `async def` and runs the model inline on the event loop, one request at a time
  (--endpoint threadpool runs it with starlette's run_in_threadpool, as a plain `def` endpoint would);
- torch keeps its default thread count (--torch-threads overrides), and the service logs it at start;
- uvicorn's access log is off: the other servers log nothing per request either.
"""

import argparse
import importlib.util
import json
import os
import sys

sys.dont_write_bytecode = True  # keep bench/batching/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import uvicorn  # noqa: E402
from fastapi import FastAPI, Request, Response  # noqa: E402
from fastapi.responses import JSONResponse  # noqa: E402
from starlette.concurrency import run_in_threadpool  # noqa: E402

from torch_models import SHAPES, load_model  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, choices=sorted(SHAPES))
    parser.add_argument("--work", default=os.path.join(HERE, ".work"), help="make_models.py's output folder")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8002)
    parser.add_argument("--endpoint", choices=["async", "threadpool"], default="async")
    parser.add_argument("--torch-threads", type=int, default=0, help="torch.set_num_threads; 0 keeps torch's default")
    return parser.parse_args()


def create_app(model_name, model, endpoint):
    app = FastAPI()

    def run(batch):
        with torch.inference_mode():
            return model(torch.from_numpy(batch)).numpy()

    @app.get("/v2/health/ready")
    async def ready():
        return Response(status_code=200)

    @app.post("/v2/models/{name}/infer")
    async def infer(name: str, request: Request):
        if name != model_name:
            return JSONResponse({"error": f"unknown model '{name}'"}, status_code=400)
        body = await request.body()
        header_length = int(request.headers.get("inference-header-content-length", len(body)))
        header = json.loads(body[:header_length])
        inputs = header["inputs"]
        if len(inputs) != 1 or inputs[0].get("datatype") != "FP32" or "binary_data_size" not in inputs[0].get("parameters", {}):
            return JSONResponse({"error": "expected one binary FP32 input"}, status_code=400)
        shape = inputs[0]["shape"]
        # .copy(): frombuffer gives a read-only view of the body, and torch wants writable memory.
        batch = np.frombuffer(body, dtype="<f4", offset=header_length).reshape(shape).copy()
        output = run(batch) if endpoint == "async" else await run_in_threadpool(run, batch)
        data = output.astype("<f4", copy=False).tobytes()
        reply = json.dumps({
            "model_name": model_name,
            "model_version": "1",
            "outputs": [{"name": "OUTPUT", "datatype": "FP32", "shape": list(output.shape),
                         "parameters": {"binary_data_size": len(data)}}],
        }).encode()
        return Response(
            content=reply + data,
            media_type="application/octet-stream",
            headers={"Inference-Header-Content-Length": str(len(reply))},
        )

    return app


def main():
    args = parse_args()
    if args.torch_threads > 0:
        torch.set_num_threads(args.torch_threads)
    model = load_model(args.model, os.path.join(args.work, "torch", f"{args.model}.pt"))
    # uvicorn's defaults (loop="auto", http="auto") pick uvloop and httptools when they are installed.
    extras = [m for m in ("uvloop", "httptools") if importlib.util.find_spec(m) is not None]
    print(f"fastapi_service: {args.model} on {args.host}:{args.port}, torch {torch.__version__} with "
          f"{torch.get_num_threads()} thread(s), {args.endpoint} endpoint, uvicorn {uvicorn.__version__} "
          f"with {' and '.join(extras) or 'asyncio and h11'}", file=sys.stderr, flush=True)
    uvicorn.run(create_app(args.model, model, args.endpoint), host=args.host, port=args.port,
                log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
