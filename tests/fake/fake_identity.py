"""fake_identity.py: STS, the IAM Identity Center portal and SSO OIDC for fake_aws.py.

Loaded by fake_aws.py (--identity FILE). Served on the same port as CloudWatch, told apart
the way the real endpoints are:
  STS (query protocol): POST / with Content-Type application/x-www-form-urlencoded and no
      X-Amz-Target; Action=AssumeRole | AssumeRoleWithWebIdentity | GetCallerIdentity,
      Version=2011-06-15; XML answers (namespace https://sts.amazonaws.com/doc/2011-06-15/),
      errors as <ErrorResponse><Error><Type/><Code/><Message/></Error>.
      AssumeRole and GetCallerIdentity must be SigV4-signed (service "sts") by known keys;
      issued temporary keys must carry their session token (X-Amz-Security-Token, signed).
      AssumeRoleWithWebIdentity must NOT be signed (botocore sends it unsigned); the token
      must be one the role accepts.
  SSO portal: GET /federation/credentials?account_id=&role_name= with header
      x-amz-sso_bearer_token (rest-json; 401 UnauthorizedException for an unknown or
      expired token, 403 ForbiddenException for a role not assigned).
  SSO OIDC: POST /token, JSON {clientId, clientSecret, grantType: "refresh_token",
      refreshToken} -> {accessToken, tokenType, expiresIn, refreshToken}
      (InvalidClientException, UnsupportedGrantTypeException, InvalidGrantException).
Every answer issues fresh temporary credentials (ASIA... keys) that CloudWatch and Service
Quotas then accept (check_request); with "temporary_only" they accept nothing else, which
proves the client used what STS/SSO gave it.

Identity file (JSON; every key optional):
  {"users": {"AKIDEXAMPLE": "arn:aws:iam::111111111111:user/alice"},   # long-term keys
   "roles": {"arn:aws:iam::222222222222:role/Hop1": {
                 "trust": ["arn:aws:iam::111111111111:user/alice"],   # caller ARN prefixes
                 "external_id": "ext-1",                              # required when set
                 "web_identity_tokens": {"<token>": "<label>"},       # accepted tokens
                 "seconds": 3600,                                     # lifetime of issued creds
                 "mfa": "123456",                                     # TokenCode required
                 "error": "RegionDisabledException", "status": 403}}, # answer with this error
   "sso": {"access_tokens": {"<token>": {"accounts": {"555555555555": ["ReadOnly"]},
                                         "expires": <epoch or absent>}},
           "clients": {"<clientId>": {"secret": "<clientSecret>",
                                      "refresh_tokens": {"<refresh>": "<access token it renews>"}}}},
   "credential_seconds": 3600,
   "temporary_only": false,
   "secrets_file": "<path>"}      # every secret, session token and SSO token issued, one a line
Log lines (the fake's --log): {"op": "AssumeRole", "role": ..., "caller": <ARN>, "external_id_ok",
  "signed", "web_token": <label>, "status", "error", ...}: never a key, token or signature.
"""

import json
import secrets
import string
import threading
import time
import urllib.parse

NS = "https://sts.amazonaws.com/doc/2011-06-15/"


def _rand(alphabet, n):
    return "".join(secrets.choice(alphabet) for _ in range(n))


def _iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def _xml_escape(s):
    return (str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


class Identity:
    def __init__(self, cfg, keys):
        self.cfg = cfg
        self.keys = keys                 # fake_aws's {access_key: secret}; issued keys are added
        self.users = dict(cfg.get("users", {}))
        self.roles = cfg.get("roles", {})
        sso = cfg.get("sso", {})
        self.sso_tokens = dict(sso.get("access_tokens", {}))
        self.sso_clients = sso.get("clients", {})
        self.seconds = int(cfg.get("credential_seconds", 3600))
        self.temporary_only = bool(cfg.get("temporary_only", False))
        self.issued = {}                 # access key -> {"token", "expires", "arn"}
        self.lock = threading.Lock()

    def issue(self, arn, seconds):
        akid = "ASIA" + _rand(string.ascii_uppercase + string.digits, 16)
        secret = _rand(string.ascii_letters + string.digits + "+/", 40)
        token = "FQoGZXIvYXdzE" + _rand(string.ascii_letters + string.digits + "+/", 300)
        expires = int(time.time()) + seconds
        with self.lock:
            self.keys[akid] = secret
            self.issued[akid] = {"token": token, "expires": expires, "arn": arn}
            self.remember(secret, token)
        return akid, secret, token, expires

    def remember(self, *values):
        """Tests grep every output for what was issued: "secrets_file" lists it, one a line."""
        path = self.cfg.get("secrets_file")
        if path:
            with open(path, "a") as f:
                for v in values:
                    f.write(v + "\n")

    def caller_arn(self, akid):
        if akid in self.issued:
            return self.issued[akid]["arn"]
        return self.users.get(akid, "arn:aws:iam::000000000000:user/unknown")

    def session_error(self, akid, token):
        """(status, code, message) when the key/token pair is not acceptable, else None."""
        rec = self.issued.get(akid)
        if rec is None:
            if token is not None:
                return 403, "InvalidClientTokenId", "The security token included in the request is invalid."
            return None
        if token != rec["token"]:
            return 403, "InvalidClientTokenId", "The security token included in the request is invalid."
        if time.time() >= rec["expires"]:
            return 400, "ExpiredToken", "The security token included in the request is expired"
        return None


# ---------------------------------------------------------------- hooks for fake_aws.py

def add_args(ap):
    ap.add_argument("--identity", help="STS / SSO / OIDC identity file (tests/fake/fake_identity.py)")


def setup(state, args):
    cfg = {}
    if getattr(args, "identity", None):
        with open(args.identity) as f:
            cfg = json.load(f)
    state.identity = Identity(cfg, state.keys)


def check_request(state, auth, token):
    """For CloudWatch / Service Quotas after a good signature: (status, code, message) or None."""
    idn = getattr(state, "identity", None)
    if idn is None or auth is None:
        return None
    akid = auth["access_key"]
    if akid in idn.issued:
        err = idn.session_error(akid, token)
        if err is not None and err[1] == "ExpiredToken":
            return 400, "ExpiredTokenException", err[2]
        return err
    if idn.temporary_only:
        return 403, "AccessDeniedException", "User: %s is not authorized to perform this action" % idn.caller_arn(akid)
    return None


def handle(h, state, body, verify_sigv4, now):
    """Answers identity requests; False when the request is not one (CloudWatch goes on)."""
    idn = getattr(state, "identity", None)
    if idn is None:
        return False
    path, _, query = h.path.partition("?")
    ctype = h.headers.get("Content-Type", "")
    entry = {"n": state.count("identity")[0], "op": None, "status": 0, "error": None,
             "client_port": h.client_address[1]}
    try:
        if h.command == "GET" and path == "/federation/credentials":
            entry["op"] = "GetRoleCredentials"
            portal(h, idn, entry, query)
        elif h.command == "POST" and path == "/token":
            entry["op"] = "CreateToken"
            oidc(h, idn, entry, body)
        elif (h.command == "POST" and not h.headers.get("X-Amz-Target")
              and ctype.startswith("application/x-www-form-urlencoded")):
            sts(h, state, idn, entry, path, query, body, verify_sigv4, now)
        else:
            return False
    finally:
        if entry["op"] is not None:
            state.write_log(entry)
    return True


# ---------------------------------------------------------------- STS

def _send(h, status, ctype, data, extra=()):
    h.send_response(status)
    h.send_header("x-amzn-RequestId", "c6104cbe-af31-11e0-8154-cbc7ccf896c7")
    h.send_header("Content-Type", ctype)
    h.send_header("Content-Length", str(len(data)))
    for k, v in extra:
        h.send_header(k, v)
    h.end_headers()
    h.wfile.write(data)


def sts_error(h, entry, status, code, message):
    entry["status"], entry["error"] = status, code
    kind = "Receiver" if status >= 500 else "Sender"
    xml = ('<ErrorResponse xmlns="%s">\n  <Error>\n    <Type>%s</Type>\n    <Code>%s</Code>\n'
           '    <Message>%s</Message>\n  </Error>\n  <RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId>\n'
           '</ErrorResponse>\n' % (NS, kind, _xml_escape(code), _xml_escape(message)))
    _send(h, status, "text/xml", xml.encode())


def sts_ok(h, entry, action, result_xml):
    entry["status"] = 200
    xml = ('<%sResponse xmlns="%s">\n  <%sResult>\n%s  </%sResult>\n  <ResponseMetadata>\n'
           '    <RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId>\n  </ResponseMetadata>\n'
           '</%sResponse>\n' % (action, NS, action, result_xml, action, action))
    _send(h, 200, "text/xml", xml.encode())


def _creds_xml(idn, role_arn, session, seconds):
    account = role_arn.split(":")[4]
    role = role_arn.rsplit("/", 1)[-1]
    arn = "arn:aws:sts::%s:assumed-role/%s/%s" % (account, role, session)
    akid, secret, token, expires = idn.issue(arn, seconds)
    return ('    <AssumedRoleUser>\n      <AssumedRoleId>AROA3XFRBF535PLBIFPI4:%s</AssumedRoleId>\n'
            '      <Arn>%s</Arn>\n    </AssumedRoleUser>\n    <Credentials>\n'
            '      <AccessKeyId>%s</AccessKeyId>\n      <SecretAccessKey>%s</SecretAccessKey>\n'
            '      <SessionToken>%s</SessionToken>\n      <Expiration>%s</Expiration>\n    </Credentials>\n'
            % (_xml_escape(session), _xml_escape(arn), akid, secret, token, _iso(expires)))


def _valid_session_name(s):
    return 2 <= len(s) <= 64 and all(c.isalnum() or c in "_+=,.@-" for c in s)


def sts(h, state, idn, entry, path, query, body, verify_sigv4, now):
    try:
        form = urllib.parse.parse_qs(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
    except UnicodeDecodeError:
        form = {}
    p = {k: v[0] for k, v in form.items()}
    action = p.get("Action")
    entry["op"] = action or "?"
    entry["signed"] = h.headers.get("Authorization") is not None
    if p.get("Version") != "2011-06-15":
        return sts_error(h, entry, 400, "InvalidAction", "Version must be 2011-06-15")
    if action == "AssumeRoleWithWebIdentity":
        return assume_web(h, idn, entry, p)
    if action not in ("AssumeRole", "GetCallerIdentity"):
        return sts_error(h, entry, 400, "InvalidAction", "Could not find operation %s for version 2011-06-15" % action)
    ok, code, msg, auth = verify_sigv4(h.command, path, query, list(h.headers.items()), body, idn.keys, now)
    entry["sig_ok"] = ok
    if not ok:
        return sts_error(h, entry, 403, {"UnrecognizedClientException": "InvalidClientTokenId",
                                         "InvalidSignatureException": "SignatureDoesNotMatch",
                                         "IncompleteSignatureException": "IncompleteSignature"}.get(code, code), msg)
    if auth["service"] != "sts":
        return sts_error(h, entry, 403, "SignatureDoesNotMatch", "Credential should be scoped to correct service: 'sts'.")
    entry["region"] = auth["region"]
    token = h.headers.get("X-Amz-Security-Token")
    err = idn.session_error(auth["access_key"], token)
    if err:
        return sts_error(h, entry, *err)
    if token is not None and "x-amz-security-token" not in auth["signed_headers"]:
        return sts_error(h, entry, 400, "IncompleteSignature", "x-amz-security-token must be signed")
    caller = idn.caller_arn(auth["access_key"])
    entry["caller"] = caller
    if action == "GetCallerIdentity":
        account = caller.split(":")[4]
        return sts_ok(h, entry, action, "    <Arn>%s</Arn>\n    <UserId>AIDACKCEVSQ6C2EXAMPLE</UserId>\n"
                      "    <Account>%s</Account>\n" % (_xml_escape(caller), account))
    role_arn = p.get("RoleArn", "")
    session = p.get("RoleSessionName", "")
    entry["role"] = role_arn
    entry["duration"] = p.get("DurationSeconds")
    if not _valid_session_name(session):
        return sts_error(h, entry, 400, "ValidationError",
                         "1 validation error detected: Value at 'roleSessionName' failed to satisfy constraint")
    role = idn.roles.get(role_arn)
    trusted = role is not None and any(caller.startswith(t) for t in role.get("trust", []))
    if not trusted:
        return sts_error(h, entry, 403, "AccessDenied", "User: %s is not authorized to perform: sts:AssumeRole on "
                         "resource: %s" % (caller, role_arn))
    want_ext = role.get("external_id")
    entry["external_id_ok"] = want_ext is None or p.get("ExternalId") == want_ext
    if not entry["external_id_ok"]:
        return sts_error(h, entry, 403, "AccessDenied", "User: %s is not authorized to perform: sts:AssumeRole on "
                         "resource: %s" % (caller, role_arn))
    seconds = role.get("seconds", idn.seconds)
    if "DurationSeconds" in p:
        try:
            d = int(p["DurationSeconds"])
        except ValueError:
            d = -1
        if not 900 <= d <= 43200:
            return sts_error(h, entry, 400, "ValidationError", "DurationSeconds must be 900 to 43200")
        seconds = min(d, role.get("seconds", d))
    if role.get("mfa") and not (p.get("SerialNumber") and p.get("TokenCode") == role["mfa"]):
        return sts_error(h, entry, 403, "AccessDenied", "MultiFactorAuthentication failed with invalid MFA one time pass code.")
    if role.get("error"):
        return sts_error(h, entry, int(role.get("status", 403)), role["error"], role.get("message", "scripted"))
    return sts_ok(h, entry, action, _creds_xml(idn, role_arn, session, seconds))


def assume_web(h, idn, entry, p):
    if entry["signed"]:
        return sts_error(h, entry, 400, "InvalidAction",
                         "AssumeRoleWithWebIdentity is sent unsigned (this fake checks it)")
    role_arn = p.get("RoleArn", "")
    entry["role"] = role_arn
    session = p.get("RoleSessionName", "")
    if not _valid_session_name(session):
        return sts_error(h, entry, 400, "ValidationError", "RoleSessionName is not valid")
    role = idn.roles.get(role_arn)
    tokens = (role or {}).get("web_identity_tokens", {})
    label = tokens.get(p.get("WebIdentityToken", ""))
    entry["web_token"] = label
    if role is None or label is None:
        return sts_error(h, entry, 400, "InvalidIdentityToken", "Couldn't retrieve verification key from your identity provider")
    return sts_ok(h, entry, "AssumeRoleWithWebIdentity",
                  _creds_xml(idn, role_arn, session, role.get("seconds", idn.seconds)))


# ---------------------------------------------------------------- IAM Identity Center

def _rest_error(h, entry, status, code, message):
    entry["status"], entry["error"] = status, code
    _send(h, status, "application/json", json.dumps({"message": message}).encode(),
          [("x-amzn-ErrorType", code)])


def portal(h, idn, entry, query):
    q = {k: v[0] for k, v in urllib.parse.parse_qs(query).items()}
    tok = h.headers.get("x-amz-sso_bearer_token")
    entry["bearer"] = tok is not None
    if h.headers.get("Authorization"):
        entry["signed"] = True
    grant = idn.sso_tokens.get(tok) if tok else None
    if grant is None or ("expires" in grant and time.time() >= grant["expires"]):
        return _rest_error(h, entry, 401, "UnauthorizedException", "Session token not found or invalid")
    acct, role = q.get("account_id"), q.get("role_name")
    entry["account"], entry["role"] = acct, role
    if not acct or not role:
        return _rest_error(h, entry, 400, "InvalidRequestException", "account_id and role_name are required")
    if role not in grant.get("accounts", {}).get(acct, []):
        return _rest_error(h, entry, 403, "ForbiddenException", "No access")
    arn = "arn:aws:sts::%s:assumed-role/AWSReservedSSO_%s_0123456789abcdef/alice" % (acct, role)
    akid, secret, token, expires = idn.issue(arn, idn.seconds)
    entry["status"] = 200
    _send(h, 200, "application/json", json.dumps({"roleCredentials": {
        "accessKeyId": akid, "secretAccessKey": secret, "sessionToken": token,
        "expiration": expires * 1000}}).encode())


def oidc(h, idn, entry, body):
    try:
        req = json.loads(body or b"{}")
    except ValueError:
        req = None
    if not isinstance(req, dict):
        return _rest_error(h, entry, 400, "InvalidRequestException", "body is not JSON")
    client = idn.sso_clients.get(req.get("clientId"))
    if client is None or client.get("secret") != req.get("clientSecret"):
        return _rest_error(h, entry, 401, "InvalidClientException", "Invalid client")
    if req.get("grantType") != "refresh_token":
        return _rest_error(h, entry, 400, "UnsupportedGrantTypeException", "Unsupported grant type")
    rts = client.setdefault("refresh_tokens", {})
    old_access = rts.get(req.get("refreshToken"))
    if old_access is None or old_access not in idn.sso_tokens:
        return _rest_error(h, entry, 400, "InvalidGrantException", "Invalid grant provided")
    grant = dict(idn.sso_tokens[old_access])
    new_access = "aoa" + _rand(string.ascii_letters + string.digits, 60)
    new_refresh = "aor" + _rand(string.ascii_letters + string.digits, 60)
    grant["expires"] = time.time() + 3600
    with idn.lock:
        idn.sso_tokens[new_access] = grant
        rts[new_refresh] = new_access
        idn.remember(new_access, new_refresh)
    entry["status"] = 200
    _send(h, 200, "application/json", json.dumps({
        "accessToken": new_access, "tokenType": "Bearer", "expiresIn": 3600,
        "refreshToken": new_refresh}).encode())
