"""TLS clients for Nereid that this project did not write: Python's ssl with http.client, and grpcio's
ssl_channel_credentials as tritonclient.grpc uses them. test/e2e/tls.test.ts runs it.

Usage:
  /usr/bin/python3 tls_client.py https URL CA_FILE [CERT_FILE KEY_FILE]
  /usr/bin/python3 tls_client.py grpc HOST:PORT CA_FILE [CERT_FILE KEY_FILE]

`https` GETs URL trusting CA_FILE (with the client certificate when given) and prints
{"status": N, "body": TEXT, "serial": HEX, "subject": CN}. `grpc` calls ServerLive and ServerMetadata
(messages encoded by hand: ServerLiveResponse is `live` = field 1, ServerMetadataResponse's `name` is
field 1) and prints {"live": BOOL, "name": TEXT}. A failure prints {"error": TEXT} (for gRPC, the
status code's name first), so the test shows what the peer saw instead of a traceback.
"""

import http.client
import json
import ssl
import sys
import urllib.parse

TIMEOUT_S = 20


def read(path):
    with open(path, "rb") as file:
        return file.read()


def https(url, ca_file, cert_file=None, key_file=None):
    context = ssl.create_default_context(cafile=ca_file)
    if cert_file is not None:
        context.load_cert_chain(cert_file, key_file)
    parsed = urllib.parse.urlsplit(url)
    connection = http.client.HTTPSConnection(parsed.hostname, parsed.port, context=context, timeout=TIMEOUT_S)
    try:
        connection.request("GET", parsed.path)
        response = connection.getresponse()
        body = response.read().decode("utf-8", "replace")
        peer = connection.sock.getpeercert()
        subject = dict(pair[0] for pair in peer["subject"])
        return {"status": response.status, "body": body, "serial": peer["serialNumber"], "subject": subject["commonName"]}
    except (OSError, http.client.HTTPException) as error:
        return {"error": f"{type(error).__name__}: {error}"}
    finally:
        connection.close()


def grpc_calls(target, ca_file, cert_file=None, key_file=None):
    import grpc

    credentials = grpc.ssl_channel_credentials(
        root_certificates=read(ca_file),
        private_key=read(key_file) if key_file is not None else None,
        certificate_chain=read(cert_file) if cert_file is not None else None,
    )
    with grpc.secure_channel(target, credentials) as channel:
        try:
            live = channel.unary_unary("/inference.GRPCInferenceService/ServerLive")(b"", timeout=TIMEOUT_S)
            metadata = channel.unary_unary("/inference.GRPCInferenceService/ServerMetadata")(b"", timeout=TIMEOUT_S)
        except grpc.RpcError as error:
            return {"error": f"{error.code().name}: {error.details()}"}
    # Field 1 of ServerMetadataResponse: tag 0x0a, a one-byte length, the name.
    name = metadata[2 : 2 + metadata[1]].decode() if metadata[:1] == b"\x0a" else None
    return {"live": live == b"\x08\x01", "name": name}


if __name__ == "__main__":
    if len(sys.argv) not in (4, 6) or sys.argv[1] not in ("https", "grpc"):
        sys.exit("usage: tls_client.py https|grpc URL|HOST:PORT CA_FILE [CERT_FILE KEY_FILE]")
    call = https if sys.argv[1] == "https" else grpc_calls
    print(json.dumps(call(*sys.argv[2:])))
