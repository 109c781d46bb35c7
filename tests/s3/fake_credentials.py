#!/usr/bin/env python3
"""A fake EC2 instance metadata service (IMDSv2), container credentials endpoint, STS and
SSO portal on 127.0.0.1, for the credential chain tests.

  fake_credentials.py --key ID --secret S --token T [--lifetime SECONDS] [--auth TOKEN] [--log FILE]
                      [--keys KEYS.json] [--web-token TOKEN] [--sso-token TOKEN]

IMDSv2: PUT /latest/api/token (needs X-aws-ec2-metadata-token-ttl-seconds) gives a session
token; GET /latest/meta-data/iam/security-credentials/[role] needs it (401 otherwise).
Container: GET /container/creds, which needs `Authorization: <--auth>` when given.
Credentials expire --lifetime seconds after they are handed out; every hand-out is logged
("issued imds" / "issued container"), so tests can count refreshes. Prints the port.

STS (POST /, the query API): AssumeRole and GetCallerIdentity must be signed with SigV4
for service sts by a key of KEYS.json (the S3 proxy's file), the signature recomputed with
botocore; AssumeRoleWithWebIdentity must carry --web-token. A role whose ARN contains
"denied" is refused as STS refuses it (403 AccessDenied). Logged: "issued assume-role
ARN SESSION by KEY", "issued web-identity ARN SESSION", "identity KEY".
SSO: GET /federation/credentials?account_id=..&role_name=.. with x-amz-sso_bearer_token
equal to --sso-token; logged "issued sso ACCOUNT ROLE".
"""
import argparse
import datetime
import http.server
import json
import re
import secrets
import socketserver
import sys
import urllib.parse

try:
    import awscli  # noqa: F401  the Debian awscli (v2) package: makes its own botocore importable
except ImportError:
    pass
from botocore import auth as botocore_auth, credentials as botocore_credentials
from botocore.awsrequest import AWSRequest

AUTH = re.compile(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, "
                  r"SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$")
ACCOUNT = "123456789012"


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

    def note(self, line):
        with open(self.server.config.log, "a") as log:
            log.write(line + "\n")

    def expiration(self):
        return datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=self.server.config.lifetime)

    def credentials(self, source):
        config = self.server.config
        expiration = self.expiration()
        self.note(f"issued {source}")
        document = {"Code": "Success", "Type": "AWS-HMAC", "AccessKeyId": config.key,
                    "SecretAccessKey": config.secret, "Token": config.token,
                    "Expiration": expiration.strftime("%Y-%m-%dT%H:%M:%SZ")}
        return self.answer(200, json.dumps(document).encode(), "application/json")

    def sts_error(self, status, code, message):
        body = (f'<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type>'
                f"<Code>{code}</Code><Message>{message}</Message></Error><RequestId>1</RequestId></ErrorResponse>")
        return self.answer(status, body.encode(), "text/xml")

    def sts_signer(self, body):
        """The key that signed this STS request, or None when the signature does not check out."""
        match = AUTH.match(self.headers.get("Authorization", ""))
        if not match:
            return None
        key_id, _, region, service, signed, signature = match.groups()
        keys = self.server.keys.get(key_id)
        token = self.headers.get("x-amz-security-token")
        names = signed.split(";")
        if keys is None or service != "sts" or keys.get("token") != token or "host" not in names:
            return None
        if token is not None and "x-amz-security-token" not in names:
            return None
        request = AWSRequest(method="POST", url=f"http://{self.headers['Host']}{self.path}",
                             headers={name: self.headers.get(name) for name in names}, data=body)
        request.context["timestamp"] = self.headers["x-amz-date"]
        signer = botocore_auth.SigV4Auth(botocore_credentials.Credentials(key_id, keys["secret"], token), "sts", region)
        expected = signer.signature(signer.string_to_sign(request, signer.canonical_request(request)), request)
        return key_id if expected == signature else None

    def sts_credentials(self, action, line):
        config = self.server.config
        self.note(line)
        body = (f'<{action}Response xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><{action}Result>'
                f"<Credentials><AccessKeyId>{config.key}</AccessKeyId><SecretAccessKey>{config.secret}</SecretAccessKey>"
                f"<SessionToken>{config.token}</SessionToken>"
                f"<Expiration>{self.expiration().strftime('%Y-%m-%dT%H:%M:%S.000Z')}</Expiration></Credentials>"
                f"</{action}Result><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></{action}Response>")
        return self.answer(200, body.encode(), "text/xml")

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        form = {name: values[0] for name, values in urllib.parse.parse_qs(body.decode()).items()}
        action = form.get("Action")
        if self.path != "/" or form.get("Version") != "2011-06-15":
            return self.sts_error(400, "InvalidAction", "not an STS query")
        if action == "AssumeRoleWithWebIdentity":
            if form.get("WebIdentityToken") != self.server.config.web_token:
                return self.sts_error(400, "InvalidIdentityToken", "bad token")
            return self.sts_credentials(action, f"issued web-identity {form.get('RoleArn')} {form.get('RoleSessionName')}")
        signer = self.sts_signer(body)
        if signer is None:
            self.note(f"bad signature for {action}")
            return self.sts_error(403, "SignatureDoesNotMatch", "recomputed with botocore: no match")
        if action == "GetCallerIdentity":
            self.note(f"identity {signer}")
            result = (f"<Arn>arn:aws:sts::{ACCOUNT}:assumed-role/test/{signer}</Arn><UserId>{signer}</UserId>"
                      f"<Account>{ACCOUNT}</Account>")
            answer = (f'<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">'
                      f"<GetCallerIdentityResult>{result}</GetCallerIdentityResult></GetCallerIdentityResponse>")
            return self.answer(200, answer.encode(), "text/xml")
        if action == "AssumeRole":
            arn = form.get("RoleArn", "")
            if "denied" in arn:
                self.note(f"refused assume-role {arn}")
                return self.sts_error(403, "AccessDenied", f"User is not authorized to perform: sts:AssumeRole on {arn}")
            extra = "".join(f" {name}={form[name]}" for name in ("ExternalId", "DurationSeconds") if name in form)
            return self.sts_credentials(action, f"issued assume-role {arn} {form.get('RoleSessionName')} by {signer}{extra}")
        return self.sts_error(400, "InvalidAction", f"unknown action {action}")

    def sso_credentials(self):
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        if self.headers.get("x-amz-sso_bearer_token") != self.server.config.sso_token:
            return self.answer(401, b'{"message":"Session token not found or invalid"}', "application/json")
        account, role = query.get("account_id", [""])[0], query.get("role_name", [""])[0]
        if account != ACCOUNT:
            return self.answer(403, b'{"message":"No access"}', "application/json")
        self.note(f"issued sso {account} {role}")
        config = self.server.config
        document = {"roleCredentials": {"accessKeyId": config.key, "secretAccessKey": config.secret,
                                        "sessionToken": config.token,
                                        "expiration": int(self.expiration().timestamp() * 1000)}}
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
        if self.path.startswith("/federation/credentials?"):
            return self.sso_credentials()
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
    parser.add_argument("--keys", help="the keys STS takes signatures of (the S3 proxy's file)")
    parser.add_argument("--web-token", default="")
    parser.add_argument("--sso-token", default="")
    config = parser.parse_args()
    server = Server(("127.0.0.1", 0), Handler)
    server.config = config
    server.keys = {}
    if config.keys:
        with open(config.keys) as keys:
            server.keys = json.load(keys)
    server.tokens = set()
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
