#!/usr/bin/env python3
"""A fake EC2 instance metadata service (IMDSv2) and container credentials endpoint on
127.0.0.1, for the credential chain tests.

  fake_credentials.py --key ID --secret S --token T [--lifetime SECONDS] [--auth TOKEN] [--log FILE]

IMDSv2: PUT /latest/api/token (needs X-aws-ec2-metadata-token-ttl-seconds) gives a session
token; GET /latest/meta-data/iam/security-credentials/[role] needs it (401 otherwise).
Container: GET /container/creds, which needs `Authorization: <--auth>` when given.
Credentials expire --lifetime seconds after they are handed out; every hand-out is logged
("issued imds" / "issued container"), so tests can count refreshes. Prints the port.
"""
import argparse
import datetime
import http.server
import json
import secrets
import socketserver
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", content_type="text/plain"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def credentials(self, source):
        config = self.server.config
        expiration = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=config.lifetime)
        with open(config.log, "a") as log:
            log.write(f"issued {source}\n")
        document = {"Code": "Success", "Type": "AWS-HMAC", "AccessKeyId": config.key,
                    "SecretAccessKey": config.secret, "Token": config.token,
                    "Expiration": expiration.strftime("%Y-%m-%dT%H:%M:%SZ")}
        return self.answer(200, json.dumps(document).encode(), "application/json")

    def do_PUT(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        if self.path != "/latest/api/token" or not self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
            return self.answer(400)
        token = secrets.token_hex(16)
        self.server.tokens.add(token)
        return self.answer(200, token.encode())

    def do_GET(self):
        if self.path == "/container/creds":
            if self.server.config.auth and self.headers.get("Authorization") != self.server.config.auth:
                return self.answer(401)
            return self.credentials("container")
        prefix = "/latest/meta-data/iam/security-credentials/"
        if self.path.startswith(prefix):
            if self.headers.get("X-aws-ec2-metadata-token") not in self.server.tokens:
                return self.answer(401)  # IMDSv2 only: no session token, no answer
            if self.path == prefix:
                return self.answer(200, b"neuron-cache-test-role")
            if self.path == prefix + "neuron-cache-test-role":
                return self.credentials("imds")
        return self.answer(404)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--key", required=True)
    parser.add_argument("--secret", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--lifetime", type=int, default=3600)
    parser.add_argument("--auth", default="")
    parser.add_argument("--log", default="/dev/null")
    config = parser.parse_args()
    server = Server(("127.0.0.1", 0), Handler)
    server.config = config
    server.tokens = set()
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
