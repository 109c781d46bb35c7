#!/usr/bin/env python3
"""A stand-in for AWS S3's front door, between neuron-cache and s3rver, for the e2e tests.

Every request's SigV4 signature is recomputed with botocore (the AWS CLI's own signer)
from the signed headers the request names; a mismatch is answered 403
SignatureDoesNotMatch and logged. Requests that pass are forwarded to s3rver unchanged.
It also plays the parts of S3 the tests need: buckets in another region (301 with
x-amz-bucket-region), buckets of another account (403 AccessDenied), expired session
tokens (400 ExpiredToken), SlowDown answers, an upload part that always fails, and public
buckets that unsigned requests may read (others deny them, 403 AccessDenied).
And S3's multipart ETags: s3rver gives an object completed from parts the MD5 of its whole
content, S3 the MD5 of the part MD5s followed by "-N"; the proxy gives what S3 gives, in
the completion's answer, listings and HEAD/GET answers, until the key is written again.
With --gateway-prefix NS it plays the Hugging Face S3 gateway (https://s3.hf.co/NS): every
request path starts with /NS (signed as sent, forwarded without it), an aws-chunked or
chunked body is refused, and a GetObject is answered 302 to a second loopback server (the
CDN), which serves the bytes once and refuses any request carrying credentials. Every
breach of those rules is logged as "GATEWAY-VIOLATION ..." for the test to fail on.

  sigv4_proxy.py --upstream http://127.0.0.1:PORT --keys KEYS.json [--region-of BUCKET=REGION]...
                 [--deny BUCKET]... [--public BUCKET]... [--expired-token TOKEN]... [--slowdown N] [--fail-part N]
                 [--gateway-prefix NS] [--object-delay-ms N] [--log FILE]
--object-delay-ms holds each object GET and PUT that long (a slow link), so that a test can
interrupt a transfer part way. KEYS.json maps access key ids to {"secret": ..., "token": ... or null}. Prints the port.
"""
import argparse
import hashlib
import http.client
import http.server
import json
import re
import secrets
import socketserver
import sys
import threading
import time
import urllib.parse

try:
    import awscli  # noqa: F401  the Debian awscli (v2) package: makes its own botocore importable
except ImportError:
    pass  # a standalone botocore
from botocore import auth as botocore_auth, credentials as botocore_credentials
from botocore.awsrequest import AWSRequest

AUTH = re.compile(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, "
                  r"SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$")


class Verifier(botocore_auth.S3SigV4Auth):
    """botocore's S3 signer, told which payload hash the request claimed."""

    def __init__(self, credentials, region, payload):
        super().__init__(credentials, "s3", region)
        self._payload = payload

    def payload(self, request):
        return self._payload


ETAG_XML = re.compile(r"<ETag>[^<]*</ETag>")


def multipart_etag(complete_body):
    """S3's ETag of an object completed from the parts a CompleteMultipartUpload names."""
    parts = []
    for block in re.findall(r"<Part>(.*?)</Part>", complete_body.decode(), flags=re.S):
        number = re.search(r"<PartNumber>\s*(\d+)\s*</PartNumber>", block)
        etag = re.search(r"<ETag>([^<]*)</ETag>", block)
        parts.append((int(number.group(1)), xml_unescape(etag.group(1)).strip().strip('"')))
    digests = b"".join(bytes.fromhex(etag) for _, etag in sorted(parts))
    return f"{hashlib.md5(digests).hexdigest()}-{len(parts)}"


def xml_unescape(text):
    return (text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&apos;", "'")
            .replace("&amp;", "&"))


def error_xml(code, message, extra=""):
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code><Message>{message}</Message>'
            f"{extra}</Error>").encode()


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def note(self, line):
        with self.server.lock:
            self.server.log.write(line + "\n")
            self.server.log.flush()

    def answer(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def check_signature(self, body):
        header = self.headers.get("Authorization", "")
        match = AUTH.match(header)
        if not match:
            return "no SigV4 Authorization header"
        key_id, _, region, service, signed, signature = match.groups()
        keys = self.server.keys.get(key_id)
        if keys is None or service != "s3":
            return f"unknown key {key_id} or service {service}"
        token = self.headers.get("x-amz-security-token")
        if keys.get("token") != token:
            return "session token missing or wrong"
        names = signed.split(";")
        if "host" not in names or "x-amz-date" not in names:
            return "host and x-amz-date must be signed"
        if token is not None and "x-amz-security-token" not in names:
            return "the session token must be signed"
        claimed = self.headers.get("x-amz-content-sha256")
        if claimed is None:
            return "no x-amz-content-sha256 header"
        if claimed != "UNSIGNED-PAYLOAD" and claimed != hashlib.sha256(body).hexdigest():
            return "x-amz-content-sha256 does not match the body"
        headers = {name: self.headers.get(name) for name in names}
        url = f"http://{self.headers['Host']}{self.path}"
        request = AWSRequest(method=self.command, url=url, headers=headers, data=body)
        request.context["timestamp"] = self.headers["x-amz-date"]
        credentials = botocore_credentials.Credentials(key_id, keys["secret"], token)
        verifier = Verifier(credentials, region, claimed)
        canonical = verifier.canonical_request(request)
        expected = verifier.signature(verifier.string_to_sign(request, canonical), request)
        if expected != signature:
            return "signature mismatch; canonical request was:\n" + canonical
        return None

    def gateway_violation(self):
        """What breaks the gateway's rules in this request (None: nothing)."""
        prefix = "/" + self.server.gateway_prefix + "/"
        if not self.path.startswith(prefix):
            return f"the path does not start with {prefix}"
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return "a chunked body"
        if "aws-chunked" in self.headers.get("Content-Encoding", "").lower():
            return "an aws-chunked body"
        if self.headers.get("x-amz-content-sha256", "").startswith("STREAMING-"):
            return "a streaming (aws-chunked) payload signature"
        if "x-amz-trailer" in self.headers or "x-amz-decoded-content-length" in self.headers:
            return "an aws-chunked trailer"
        return None

    def handle_any(self):
        if self.server.gateway_prefix:
            problem = self.gateway_violation()
            if problem:
                self.note(f"GATEWAY-VIOLATION {self.command} {self.path}: {problem}")
                self.close_connection = True
                return self.answer(501, error_xml("NotImplemented", problem))
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        # What s3rver is asked: the gateway's namespace is part of the endpoint, not a bucket.
        self.upstream_path = self.path[len(self.server.gateway_prefix) + 1:] if self.server.gateway_prefix else self.path
        path = urllib.parse.urlsplit(self.upstream_path)
        bucket = path.path.lstrip("/").split("/", 1)[0]
        query = urllib.parse.parse_qs(path.query, keep_blank_values=True)
        line = f"{self.command} {self.path}"
        if "Authorization" not in self.headers:
            # Anonymous: S3 serves reads of a public bucket, and denies everything else.
            if bucket in self.server.public and self.command in ("GET", "HEAD"):
                self.note(f"{line} anonymous")
                return self.forward(path, query, body, line)
            self.note(f"{line} -> 403 AccessDenied (anonymous)")
            return self.answer(403, error_xml("AccessDenied", "Access Denied"))
        problem = self.check_signature(body)
        if problem:
            self.server.bad_signatures += 1
            self.note(f"{line} -> 403 SignatureDoesNotMatch: {problem}")
            return self.answer(403, error_xml("SignatureDoesNotMatch", "recomputed with botocore: no match"))
        match = AUTH.match(self.headers["Authorization"])
        signed_region = match.group(3)
        token = self.headers.get("x-amz-security-token")
        if token in self.server.expired:
            self.note(f"{line} -> 400 ExpiredToken")
            return self.answer(400, error_xml("ExpiredToken", "The provided token has expired."))
        if bucket in self.server.denied:
            self.note(f"{line} -> 403 AccessDenied")
            return self.answer(403, error_xml("AccessDenied", "Access Denied"))
        home = self.server.regions.get(bucket)
        if home and home != signed_region:
            self.note(f"{line} -> 301 PermanentRedirect ({home})")
            extra = f"<Endpoint>s3.{home}.amazonaws.com</Endpoint><Bucket>{bucket}</Bucket><Region>{home}</Region>"
            return self.answer(301, error_xml("PermanentRedirect", "The bucket is in another region.", extra),
                               [("x-amz-bucket-region", home)])
        if self.command == "PUT" and self.server.slowdown > 0:
            with self.server.lock:
                self.server.slowdown -= 1
            self.note(f"{line} -> 503 SlowDown")
            return self.answer(503, error_xml("SlowDown", "Please reduce your request rate."))
        if self.command == "PUT" and "partNumber" in query and query["partNumber"][0] == str(self.server.fail_part):
            self.note(f"{line} -> 400 InvalidArgument (injected part failure)")
            return self.answer(400, error_xml("InvalidArgument", "injected failure of this part"))
        return self.forward(path, query, body, line)

    def forward(self, path, query, body, line):
        if self.server.object_delay > 0 and self.command in ("GET", "PUT") and self.is_object(path, query):
            time.sleep(self.server.object_delay)
        upstream = http.client.HTTPConnection(self.server.upstream.hostname, self.server.upstream.port, timeout=60)
        # Verified here: s3rver gets the request anonymously (it knows none of the test keys).
        dropped = ("expect", "authorization", "x-amz-security-token")
        headers = {name: value for name, value in self.headers.items() if name.lower() not in dropped}
        upstream.request(self.command, self.upstream_path,
                         body=body if body or self.command in ("PUT", "POST") else None, headers=headers)
        response = upstream.getresponse()
        data = response.read()
        self.note(f"{line} -> {response.status}")
        data, etag = self.as_s3_etags(path, query, body, response.status, data)
        if self.server.cdn and self.command == "GET" and response.status == 200 and self.is_object(path, query):
            return self.redirect_to_cdn(response, data, etag, line)
        corrupt = self.server.corrupt_get
        if self.command == "GET" and response.status == 200 and corrupt and corrupt in path.path and data:
            middle = len(data) // 2
            data = data[:middle] + bytes([data[middle] ^ 0x01]) + data[middle + 1:]
            self.note(f"{line} -> one byte flipped")
        self.send_response(response.status)
        for name, value in response.getheaders():
            if name.lower() == "etag" and etag:
                value = f'"{etag}"'
            if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(name, value)
        # A HEAD answer has no body but the object's length.
        length = response.getheader("Content-Length") if self.command == "HEAD" else None
        self.send_header("Content-Length", length or str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        upstream.close()

    @staticmethod
    def is_object(path, query):
        return "/" in path.path.lstrip("/") and not query

    def redirect_to_cdn(self, response, data, etag, line):
        """The gateway's GetObject: 302 to the CDN, which serves the bytes once (with S3's ETag)."""
        headers = [(name, f'"{etag}"' if etag and name.lower() == "etag" else value)
                   for name, value in response.getheaders()
                   if name.lower() not in ("transfer-encoding", "connection", "content-length")]
        token = secrets.token_hex(16)
        with self.server.lock:
            self.server.cdn.objects[token] = (headers, data)
        location = f"http://127.0.0.1:{self.server.cdn.server_address[1]}/cdn/{token}"
        self.note(f"{line} -> 302 {location}")
        self.answer(302, b"", [("Location", location)])

    def as_s3_etags(self, path, query, body, status, data):
        """The answer's body, and the ETag header S3 would give (None: s3rver's is right)."""
        key = urllib.parse.unquote(path.path)
        multipart = self.server.multipart_etags
        if status != 200:
            return data, None
        if self.command == "POST" and "uploadId" in query:
            etag = multipart_etag(body)
            with self.server.lock:
                multipart[key] = etag
            return ETAG_XML.sub(f"<ETag>&quot;{etag}&quot;</ETag>", data.decode()).encode(), None
        if self.command in ("PUT", "DELETE") and "uploadId" not in query:
            with self.server.lock:
                multipart.pop(key, None)
            return data, None
        if self.command == "GET" and query.get("list-type") == ["2"]:
            bucket = key.strip("/").split("/", 1)[0]

            def contents(match):
                block = match.group(0)
                name = re.search(r"<Key>([^<]*)</Key>", block)
                etag = multipart.get(f"/{bucket}/{xml_unescape(name.group(1))}") if name else None
                return ETAG_XML.sub(f"<ETag>&quot;{etag}&quot;</ETag>", block) if etag else block
            with self.server.lock:
                return re.sub(r"<Contents>.*?</Contents>", contents, data.decode(), flags=re.S).encode(), None
        if self.command in ("GET", "HEAD"):
            with self.server.lock:
                return data, multipart.get(key)
        return data, None

    do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = handle_any


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


class Cdn(http.server.BaseHTTPRequestHandler):
    """The CDN a gateway GetObject redirects to: another host, which must never see credentials."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        proxy = self.server.proxy
        credentials = [name for name in self.headers.keys()
                       if name.lower() in ("authorization", "x-amz-security-token", "x-amz-date",
                                           "x-amz-content-sha256")]
        token = self.path.rsplit("/", 1)[-1]
        with proxy.lock:
            found = self.server.objects.pop(token, None)
            if credentials:
                proxy.log.write(f"GATEWAY-VIOLATION CDN GET {self.path}: sent {', '.join(credentials)}\n")
            else:
                proxy.log.write(f"CDN GET {self.path} -> {200 if found else 404}\n")
            proxy.log.flush()
        status, headers, data = (400, [], b"credentials sent to the CDN") if credentials else (
            (200, *found) if found else (404, [], b"no such object"))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--keys", required=True)
    parser.add_argument("--region-of", action="append", default=[])
    parser.add_argument("--deny", action="append", default=[])
    parser.add_argument("--public", action="append", default=[], help="a bucket anyone may read, unsigned")
    parser.add_argument("--expired-token", action="append", default=[])
    parser.add_argument("--slowdown", type=int, default=0)
    parser.add_argument("--fail-part", type=int, default=0)
    parser.add_argument("--corrupt-get", default="", help="flip a byte of every object GET whose path has this")
    parser.add_argument("--gateway-prefix", default="", help="play the HF S3 gateway at /PREFIX, with its CDN")
    parser.add_argument("--object-delay-ms", type=int, default=0, help="hold each object GET and PUT that long")
    parser.add_argument("--log", default="/dev/null")
    args = parser.parse_args()
    server = Server(("127.0.0.1", 0), Proxy)
    server.upstream = urllib.parse.urlsplit(args.upstream)
    with open(args.keys) as keys:
        server.keys = json.load(keys)
    server.regions = dict(item.split("=", 1) for item in args.region_of)
    server.denied = set(args.deny)
    server.public = set(args.public)
    server.expired = set(args.expired_token)
    server.slowdown = args.slowdown
    server.fail_part = args.fail_part
    server.corrupt_get = args.corrupt_get
    server.object_delay = args.object_delay_ms / 1000
    server.bad_signatures = 0
    server.multipart_etags = {}  # "/bucket/key" -> S3's ETag of an object completed from parts
    server.lock = threading.Lock()
    server.log = open(args.log, "a")
    server.gateway_prefix = args.gateway_prefix.strip("/")
    server.cdn = None
    if server.gateway_prefix:
        server.cdn = Server(("127.0.0.1", 0), Cdn)
        server.cdn.proxy = server
        server.cdn.objects = {}  # token -> (headers, bytes)
        threading.Thread(target=server.cdn.serve_forever, daemon=True).start()
        server.log.write(f"CDN listening on {server.cdn.server_address[1]}\n")
        server.log.flush()
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
