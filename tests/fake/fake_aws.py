#!/usr/bin/env python3
"""fake_aws.py: a fake CloudWatch + Service Quotas endpoint for bedtop's tests.

Listens on 127.0.0.1 only. Every request's SigV4 signature is verified with an
implementation independent of bedtop's C signer (self-check: --selftest DIR runs the
AWS signing suite in DIR, e.g. ../shared/testdata/sigv4/v4).

Command line
  --port N            0 (default): pick a free port; "PORT <n>" is printed on stdout
  --log FILE          one JSON line per request (see "Log lines" below)
  --scenario FILE     the data and the fault script (format below)
  --access-key K      default AKIDEXAMPLE
  --secret-key S      default wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY
  --session-token T   when given, every request must carry X-Amz-Security-Token T
  --now EPOCH         pins the server's notion of "now" for data (overrides scenario "now")
  --selftest DIR      verify the signing suite in DIR and exit (0: all cases pass)
  --identity FILE     also serve STS, the SSO portal and SSO OIDC (see fake_identity.py)

Protocols served (POST /, dispatched on X-Amz-Target)
  CloudWatch, JSON 1.0 (Content-Type application/x-amz-json-1.0, SigV4 service "monitoring"):
    GraniteServiceVersion20100801.GetMetricData, GraniteServiceVersion20100801.ListMetrics
  Service Quotas, JSON 1.1 (application/x-amz-json-1.1, service "servicequotas"):
    ServiceQuotasV20190624.ListServiceQuotas, .ListAWSDefaultServiceQuotas, .GetServiceQuota
  Price List, JSON 1.1 (application/x-amz-json-1.1, service "pricing"):
    AWSPriceListService.GetProducts: the scenario's "products" (none by default; "default":
    a few Amazon Bedrock token prices, DEFAULT_PRODUCTS), TERM_MATCH filters on their attributes (regionCode, usagetype, ...),
    paged by "page_size" {"GetProducts": N} and MaxResults; PriceList items are product
    documents as JSON strings, as AWS sends them. The body is checked against botocore's
    pricing model where botocore is installed. Refuse it with a fault rule
    {"op": "GetProducts", "action": "error", "code": "AccessDeniedException", "status": 400}.
    A "products" entry is a whole product document, or {"provider", "model", "region",
    "usagetype", "usd", "unit" (default "1K tokens")} filled into one.
  Bedrock control plane, REST-JSON (SigV4 service "bedrock"):
    GET /inference-profiles/{inferenceProfileIdentifier}  (GetInferenceProfile; the ID or the
    URL-encoded ARN; the signature is checked with the non-S3 rule: the path as sent is
    URI-encoded once more in the canonical request)
    GET /inference-profiles?maxResults=N&type=SYSTEM_DEFINED[&nextToken=T]  (ListInferenceProfiles:
    the scenario's "system_profiles" IDs, default the us./eu./apac. Claude ones, paged by
    maxResults; "list_profiles_error": {"status", "code", "message"} refuses it; each summary
    lists its models' foundation-model ARNs per Region, an entry may be {"id", "regions"})
    GET /foundation-models[?byProvider=P]  (ListFoundationModels: the scenario's
    "foundation_models" [{"modelId", "status", "legacyTime", "endOfLifeTime", ...}] with
    modelLifecycle; "list_models_error" refuses it)
    POST /listTagsForResource  (ListTagsForResource, as botocore's bedrock model has it: a
    JSON body {"resourceARN": ARN}, answer {"tags": [{"key", "value"}]}: the scenario's
    "tags" {ARN: {KEY: VALUE}}; an ARN not listed is a 404 ResourceNotFoundException;
    "tags_error": {"status", "code", "message"} refuses every call)
  Errors are JSON {"__type": ..., "message"/"Message": ...} as the real services send them;
  CloudWatch errors also carry x-amzn-query-error: <QueryCode>;Sender; Bedrock errors carry
  x-amzn-ErrorType.
  Every CloudWatch and Service Quotas request body is checked against the service model in
  $BEDTOP_SHARED/testdata/aws/ (members, required members, types, lengths, enums): an unknown
  or malformed member is a 400 ValidationError, and the log line says "model_ok".

Scenario file (JSON; every key optional)
  {
    "now": 1764410400,             # server "now" for data (epoch s); default: wall clock
    "clock_offset": 0,             # server clock = wall clock + offset (s): used for the
                                   # signature age check (> 300 s off: InvalidSignatureException
                                   # "Signature expired") and the Date response header
    "series": [                    # per-minute metric data
      {"namespace": "AWS/Bedrock", "metric": "InputTokenCount",
       "dimensions": {"ModelId": "anthropic.claude-3"}, "stat": "Sum",
       "values": [1, 2, null, 4],  # one per minute, oldest first; null = no datapoint
       "end": 1764410280,          # minute of the last value; default: last complete minute
                                   # (floor(now/60)*60 - 60)
       "start": 1764410100},       # alternative to "end": minute of the first value
      {"namespace": "AWS/Bedrock", "metric": "Invocations", "dimensions": {"ModelId": "m"},
       "stat": "Sum", "generator": {"constant": 5}},            # every minute: 5
      {"namespace": "AWS/Bedrock", "metric": "OutputTokenCount", "dimensions": {"ModelId": "m"},
       "stat": "Sum", "generator": {"linear": {"start": 100, "step": 10}},
       "start": 1764406800, "end": 1764410340}   # value(t) = 100 + 10*(t - start)/60
    ],                             # generators default to start = end - 24 h
    "denied_models": ["m2"],       # GetMetricData queries for these ModelIds answer
                                   # StatusCode "Forbidden" (one route unreadable)
    "metrics": [ {"Namespace":..., "MetricName":..., "Dimensions":[{"Name":..,"Value":..}]} ],
                                   # ListMetrics answer; default: one per distinct series metric
    "quotas": [ {"QuotaCode": "L-1", "QuotaName": "...", "Value": 2000000} ],  # applied values
    "default_quotas": [ ... ],     # AWS defaults (ListAWSDefaultServiceQuotas); same shape.
                                   # Missing fields are filled in: ServiceCode "bedrock",
                                   # ServiceName, QuotaArn, Unit "None", Adjustable, GlobalQuota
                                   # ("Adjustable": false per quota: one raised only through
                                   # AWS Support, e.g. Sonnet 5 on-demand, the cross-model daily)
    "page_size": {"GetMetricData": 2, "ListMetrics": 500,
                  "ListServiceQuotas": 3, "ListAWSDefaultServiceQuotas": [3, 0, 1]},
                                   # results per page; a list gives successive page sizes (the
                                   # last repeats), so short and even empty pages with a
                                   # NextToken can be scripted. Service Quotas also honours
                                   # MaxResults. GetMetricData counts MetricDataResults.
    "datapoints_per_page": 0,      # GetMetricData: > 0 splits long series across pages
                                   # (same Id again, StatusCode PartialData until the last)
    "expired_tokens": ["OLD"],     # session tokens answered with ExpiredTokenException
    "inference_profiles": [        # GetInferenceProfile answers (application inference profiles)
      {"inferenceProfileArn": "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc",
       "models": [{"modelArn": "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-..."}]}
    ],                             # other fields filled in; "error": {"status", "code", "message"}
                                   # answers that profile with an error instead
                                   # series may carry "account": "111122223333": a source
                                   # account's metric, asked with AccountId (cross-account
                                   # observability); ListMetrics lists it only with
                                   # IncludeLinkedAccounts, with OwningAccounts
    "faults": [                    # applied by request count, before normal handling
      {"op": "GetMetricData", "nth": 1, "count": 1, "action": "throttle"}
    ],
    "get_metric_data_messages": [  # every GetMetricData answer's top-level Messages
      {"Code": "MaxQueryTimeRangeExceed", "Value": "..."}
    ]
  }
  Fault rule fields: "op" (operation name without prefix, or "*" for any request, counted
  together), "region" (only requests signed for that Region: one Region failing),
  "while_file" (only while that file exists: a test turns a rule on and off),
  "body_has" (only requests whose body holds that text, e.g. '"Period":3600'), "nth" (1-based request number for that op; default 1), "count" (how many
  consecutive requests from nth; default 1; 0 = every request from nth on), "action":
    throttle        400 ThrottlingException (CloudWatch) / TooManyRequestsException (Quotas)
    5xx             500 (or "status": 502/503/504) InternalServiceFault / ServiceException
    delay           sleep "secs" (default 2) then answer normally
    truncate        send the headers with the full Content-Length, then half the body, close
    malformed       200 with a body that is not JSON
    reset           close the connection without an answer (TCP RST)
    expired_token   400 ExpiredTokenException
    skew            403 InvalidSignatureException "Signature expired" (with a Date header)
    hang            read the request, never answer (for "secs", default 3600)
    error           "status" (default 400), "code", "message": any error answer

Known behaviour of the real APIs that is reproduced
  GetMetricData: at most 500 MetricDataQueries (else 400 ValidationError); only datapoints
  with StartTime <= t < EndTime; Timestamps newest first (ScanBy TimestampDescending, the
  default) or oldest first (TimestampAscending); Period > 60 aggregates the per-minute
  values (Sum/SampleCount: sum, Average: mean, Maximum/Minimum, pNN: max) on period
  boundaries; unknown metrics give empty Timestamps/Values with StatusCode Complete;
  timestamps are epoch seconds (JSON 1.0); metric math "SUM([id,...])" over MetricStat
  queries of the same request (ReturnData false ones included) sums the series present
  at each timestamp. Metrics Insights: one query per request (else 400 ValidationError),
  SELECT SUM|AVG|MIN|MAX|COUNT(Metric) FROM SCHEMA("Namespace", Dim) GROUP BY Dim with a
  Period, over the last 3 hours only: one result per group with datapoints, all under the
  query's Id, Label = the group's dimension value (the log line adds "insights_series",
  the series returned; it is counted, and matched by fault rules, as op
  "GetMetricData:Insights", so a "GetMetricData" rule's nth counts the polls alone). Bad
  NextToken: 400 InvalidNextToken /
  InvalidPaginationTokenException.

Log lines (--log): one JSON object per request, written after the answer:
  {"n": <request number, all ops>, "op": "GetMetricData", "target": <X-Amz-Target>,
   "service": <scope service>, "region": <scope region>, "sig_ok": true, "sig_error": "",
   "token_ok": true|false|null (null: no token configured or sent), "attempt": <from
   amz-sdk-request "attempt=N", else null>, "amz_date": "...", "body": <request JSON or null>,
   "status": <code sent, 0 when none was>, "error": <error code sent or null>,
   "fault": <fault action applied or null>, "user_agent": "...",
   "client_port": <the client's TCP port: equal ports mean a reused connection>,
   "path": <request path>, "model_ok": true|false|null (the body checked against the service
   model; null: no model for that service), "model_error": "..."}
  Never a secret: no Authorization header, no signature, no token value.
"""

import argparse
import base64
import datetime
import hashlib
import hmac
import json
import os
import re
import socket
import struct
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import fake_identity  # STS, SSO portal, SSO OIDC (--identity)

DEFAULT_AK = "AKIDEXAMPLE"
OWN_ACCOUNT = "123456789012"   # the account the fake's credentials belong to
DEFAULT_SK = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
MAX_BODY = 16 * 1024 * 1024
CW_PREFIX = "GraniteServiceVersion20100801."
SQ_PREFIX = "ServiceQuotasV20190624."
OPS = {
    CW_PREFIX + "GetMetricData": ("monitoring", "GetMetricData"),
    CW_PREFIX + "ListMetrics": ("monitoring", "ListMetrics"),
    SQ_PREFIX + "ListServiceQuotas": ("servicequotas", "ListServiceQuotas"),
    SQ_PREFIX + "ListAWSDefaultServiceQuotas": ("servicequotas", "ListAWSDefaultServiceQuotas"),
    SQ_PREFIX + "GetServiceQuota": ("servicequotas", "GetServiceQuota"),
    "AWSPriceListService.GetProducts": ("pricing", "GetProducts"),
}
CONTENT_TYPES = {"monitoring": "application/x-amz-json-1.0",
                 "servicequotas": "application/x-amz-json-1.1",
                 "pricing": "application/x-amz-json-1.1",
                 "bedrock": "application/json"}
# CloudWatch is awsQueryCompatible: errors carry the query-protocol code in a header.
CW_QUERY_CODES = {"ThrottlingException": "Throttling", "InternalServiceFault": "InternalServiceError",
                  "InvalidNextToken": "InvalidNextToken", "ValidationError": "ValidationError"}


# ---------------------------------------------------------------- SigV4 verification

def _uri_encode(s, safe):
    return urllib.parse.quote(s, safe=safe)


def canonical_path(raw_path, normalize=True, decode=True):
    """Normalised, URI-encoded path (non-S3 rules: remove dot segments, merge slashes).
    decode=False: a REST path as sent is URI-encoded once more (an encoded ':', %3A,
    becomes %253A), as AWS signs every service but S3."""
    path = urllib.parse.unquote(raw_path) if decode else raw_path
    if not normalize:
        return _uri_encode(path, "/-_.~")
    segs = []
    for seg in path.split("/"):
        if seg in ("", "."):
            continue
        if seg == "..":
            if segs:
                segs.pop()
            continue
        segs.append(seg)
    out = "/" + "/".join(_uri_encode(s, "-_.~") for s in segs)
    if path.endswith("/") and len(out) > 1:
        out += "/"
    return out


def canonical_query(raw_query):
    pairs = []
    if raw_query:
        for part in raw_query.split("&"):
            if part == "":
                continue
            k, _, v = part.partition("=")
            k = urllib.parse.unquote(k)
            v = urllib.parse.unquote(v)
            pairs.append((_uri_encode(k, "-_.~"), _uri_encode(v, "-_.~")))
    pairs.sort()
    return "&".join(k + "=" + v for k, v in pairs)


def _trim(v):
    return re.sub(r"\s+", " ", v.strip())


def parse_authorization(value):
    if not value or not value.startswith("AWS4-HMAC-SHA256 "):
        return None
    fields = {}
    for part in value[len("AWS4-HMAC-SHA256 "):].split(","):
        k, _, v = part.strip().partition("=")
        fields[k] = v
    if not all(k in fields for k in ("Credential", "SignedHeaders", "Signature")):
        return None
    cred = fields["Credential"].split("/")
    if len(cred) != 5 or cred[4] != "aws4_request":
        return None
    return {"access_key": cred[0], "date": cred[1], "region": cred[2], "service": cred[3],
            "signed_headers": fields["SignedHeaders"].split(";"), "signature": fields["Signature"]}


def signing_key(secret, date, region, service):
    k = hmac.new(("AWS4" + secret).encode(), date.encode(), hashlib.sha256).digest()
    for part in (region, service, "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    return k


def verify_sigv4(method, raw_path, raw_query, headers, body, keys, now, normalize=True, rest=False):
    """headers: list of (name, value). keys: {access_key: secret}.
    Returns (ok, error_code, message, auth_dict)."""
    hmap = {}
    for name, value in headers:
        hmap.setdefault(name.lower(), []).append(value)
    auth = parse_authorization((hmap.get("authorization") or [None])[0])
    if auth is None:
        return False, "IncompleteSignatureException", "Authorization header missing or malformed", None
    if auth["access_key"] not in keys:
        return False, "UnrecognizedClientException", "The security token included in the request is invalid.", auth
    amz_date = (hmap.get("x-amz-date") or [None])[0]
    if amz_date is None:
        return False, "IncompleteSignatureException", "X-Amz-Date header missing", auth
    if "host" not in auth["signed_headers"]:
        return False, "IncompleteSignatureException", "host must be a signed header", auth
    if "x-amz-date" not in auth["signed_headers"]:
        return False, "IncompleteSignatureException", "x-amz-date must be a signed header", auth
    try:
        t = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.timezone.utc)
    except ValueError:
        return False, "IncompleteSignatureException", "X-Amz-Date is not yyyyMMddTHHmmssZ", auth
    if auth["date"] != amz_date[:8]:
        return False, "InvalidSignatureException", "Credential date does not match X-Amz-Date", auth
    canon_headers = ""
    for name in auth["signed_headers"]:
        if name not in hmap:
            return False, "InvalidSignatureException", "signed header %s not in request" % name, auth
        canon_headers += name + ":" + ",".join(_trim(v) for v in hmap[name]) + "\n"
    payload_hash = hashlib.sha256(body).hexdigest()
    declared = (hmap.get("x-amz-content-sha256") or [None])[0]
    if declared is not None and declared != "UNSIGNED-PAYLOAD":
        if declared != payload_hash:
            return False, "InvalidSignatureException", "x-amz-content-sha256 does not match the body", auth
    cpath = canonical_path(raw_path, normalize, decode=not rest)
    creq = "\n".join([method, cpath, canonical_query(raw_query), canon_headers,
                      ";".join(auth["signed_headers"]), payload_hash])
    scope = "/".join([auth["date"], auth["region"], auth["service"], "aws4_request"])
    sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(creq.encode()).hexdigest()])
    key = signing_key(keys[auth["access_key"]], auth["date"], auth["region"], auth["service"])
    want = hmac.new(key, sts.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(want, auth["signature"]):
        return False, "InvalidSignatureException", (
            "The request signature we calculated does not match the signature you provided."), auth
    if now is not None:
        age = now - t.timestamp()
        if abs(age) > 300:
            return False, "InvalidSignatureException", "Signature expired: %s is now earlier than %s (%s - 5 min.)" % (
                amz_date, fmt_amz(now - 300), fmt_amz(now)), auth
    return True, None, None, auth


def fmt_amz(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def selftest(suite_dir):
    """Checks the verifier against the AWS signing suite's signed requests (header form)."""
    passed = failed = 0
    for case in sorted(os.listdir(suite_dir)):
        d = os.path.join(suite_dir, case)
        f = os.path.join(d, "header-signed-request.txt")
        if not os.path.isfile(f):
            continue
        with open(os.path.join(d, "context.json")) as cf:
            ctx = json.load(cf)
        with open(f, "rb") as rf:
            raw = rf.read().decode("utf-8")
        head, _, body = raw.partition("\n\n")
        lines = head.split("\n")
        method, _, rest = lines[0].partition(" ")
        target = rest.rsplit(" ", 1)[0]
        path, _, query = target.partition("?")
        headers = []
        for line in lines[1:]:
            if line[:1] in (" ", "\t") and headers:
                headers[-1] = (headers[-1][0], headers[-1][1] + "\n" + line)
                continue
            name, _, value = line.partition(":")
            headers.append((name, value))
        keys = {ctx["credentials"]["access_key_id"]: ctx["credentials"]["secret_access_key"]}
        norm = ctx.get("normalize", True)
        ok, code, msg, _ = verify_sigv4(method, path, query, headers, body.encode(), keys, None, norm)
        # Flipping one byte of the body of a POST, or the date, must break the signature.
        bad = [(n, v.replace("20150830T123600Z", "20150830T123601Z")) for n, v in headers]
        bad_ok = verify_sigv4(method, path, query, bad, body.encode(), keys, None, norm)[0]
        if ok and not bad_ok:
            passed += 1
            print("ok - selftest %s" % case)
        else:
            failed += 1
            print("not ok - selftest %s: %s %s (tampered accepted: %s)" % (case, code, msg, bad_ok))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


# ---------------------------------------------------------------- scenario data

class ApiError(Exception):
    def __init__(self, status, code, message):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def minute_floor(t):
    return int(t) // 60 * 60


class Scenario:
    def __init__(self, data, now_override):
        self.data = data
        self.pinned_now = now_override if now_override is not None else data.get("now")
        self.clock_offset = float(data.get("clock_offset", 0))
        self.page_size = data.get("page_size", {})
        self.dp_per_page = int(data.get("datapoints_per_page", 0))
        self.expired_tokens = set(data.get("expired_tokens", []))
        self.faults = data.get("faults", [])
        # GetMetricData's top-level Messages, as a server sends them (hostile ones too)
        self.gmd_messages = data.get("get_metric_data_messages", [])
        self.series = {}
        for s in data.get("series", []):
            self.series[self.series_key(s["namespace"], s["metric"], s.get("dimensions", {}),
                                        s.get("stat", "Sum"), s.get("account"))] = s
        self.profiles = data.get("inference_profiles", [])
        prods = data.get("products", [])
        self.products = [product_doc(p) for p in (DEFAULT_PRODUCTS if prods == "default" else prods)]
        self.quotas = [self.fill_quota(q, True) for q in data.get("quotas", [])]
        self.default_quotas = [self.fill_quota(q, False) for q in data.get("default_quotas", [])]

    def now(self):
        return float(self.pinned_now) if self.pinned_now is not None else time.time()

    def server_clock(self):
        return time.time() + self.clock_offset

    @staticmethod
    def series_key(ns, metric, dims, stat, account=None):
        """account: a source account's metric (None: the monitoring account's own)."""
        return (ns, metric, tuple(sorted(dims.items())), stat, account or OWN_ACCOUNT)

    @staticmethod
    def fill_quota(q, applied):
        q = dict(q)
        code = q.setdefault("ServiceCode", "bedrock")
        q.setdefault("ServiceName", "Amazon Bedrock")
        acct = "123456789012" if applied else ""
        q.setdefault("QuotaArn", "arn:aws:servicequotas:us-east-1:%s:%s/%s" % (acct, code, q.get("QuotaCode", "")))
        q.setdefault("Unit", "None")
        q.setdefault("Adjustable", True)
        q.setdefault("GlobalQuota", False)
        if applied:
            q.setdefault("QuotaAppliedAtLevel", "ACCOUNT")
        return q

    def minute_values(self, s):
        """{minute epoch: value} for one series."""
        last_complete = minute_floor(self.now()) - 60
        out = {}
        if "values" in s:
            vals = s["values"]
            if "start" in s:
                start = minute_floor(s["start"])
            else:
                start = minute_floor(s.get("end", last_complete)) - 60 * (len(vals) - 1)
            for i, v in enumerate(vals):
                if v is not None:
                    out[start + 60 * i] = float(v)
            return out
        gen = s.get("generator", {})
        end = minute_floor(s.get("end", last_complete))
        start = minute_floor(s.get("start", end - 86400 + 60))
        for t in range(start, end + 1, 60):
            i = (t - start) // 60
            if "constant" in gen:
                out[t] = float(gen["constant"])
            elif "linear" in gen:
                out[t] = float(gen["linear"].get("start", 0)) + float(gen["linear"].get("step", 0)) * i
        return out

    def sizes(self, op):
        ps = self.page_size.get(op)
        if ps is None:
            return [500 if op in ("ListMetrics", "GetMetricData") else 100]
        return ps if isinstance(ps, list) else [ps]


def encode_token(offset, page):
    return base64.b64encode(json.dumps([offset, page]).encode()).decode()


def decode_token(tok, bad_code):
    try:
        offset, page = json.loads(base64.b64decode(tok.encode(), validate=True))
        return int(offset), int(page)
    except Exception:
        raise ApiError(400, bad_code, "Invalid NextToken")


def paginate(items, sizes, token, bad_code, max_results=None):
    offset, page = (0, 0) if not token else decode_token(token, bad_code)
    if offset < 0 or offset > len(items):
        raise ApiError(400, bad_code, "Invalid NextToken")
    n = sizes[min(page, len(sizes) - 1)]
    if max_results is not None:
        n = min(n, max_results)
    chunk = items[offset:offset + n]
    nxt = offset + len(chunk)
    # A scripted empty page keeps a token so clients must follow it.
    if nxt < len(items):
        return chunk, encode_token(nxt, page + 1)
    return chunk, None


def parse_time(v, what):
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, str):
        try:
            return datetime.datetime.fromisoformat(v.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    raise ApiError(400, "ValidationError", "%s is not a timestamp" % what)


def aggregate(vals, stat):
    if stat in ("Sum", "SampleCount"):
        return sum(vals)
    if stat == "Average":
        return sum(vals) / len(vals)
    if stat == "Minimum":
        return min(vals)
    return max(vals)


def forbidden(qid, q):
    return {"Id": qid, "Label": q.get("Label", qid), "Timestamps": [], "Values": [],
            "StatusCode": "Forbidden",
            "Messages": [{"Code": "AccessDenied", "Value": "not authorized for this ModelId"}]}


# A Metrics Insights query as bedtop's unseen-callers collector sends it (the forms
# AWS documents; only these are faked):
#   SELECT SUM(Metric) FROM SCHEMA("Namespace", Dim) GROUP BY Dim
INSIGHTS_RE = re.compile(r'^SELECT (SUM|AVG|MIN|MAX|COUNT)\((\w+)\) FROM SCHEMA\("([^"]+)", ?(\w+)\)'
                         r' GROUP BY (\w+)$')
INSIGHTS_STAT = {"SUM": "Sum", "AVG": "Average", "MIN": "Minimum", "MAX": "Maximum", "COUNT": "SampleCount"}


def insights_results(sc, q, start, end, ascending):
    """The series a Metrics Insights GROUP BY query returns, as CloudWatch answers it: one
    MetricDataResults entry per group under the query's Id, its Label the group's value
    (the dimension grouped by), its values aggregated per Period; only the schema's
    series (exactly the listed dimensions), only groups with datapoints in the window,
    at most 500 groups."""
    mm = INSIGHTS_RE.match(q["Expression"])
    if not mm:
        raise ApiError(400, "ValidationError", "Metrics Insights: only SELECT f(Metric) FROM "
                       "SCHEMA(\"Namespace\", Dim) GROUP BY Dim is faked: %r" % q["Expression"])
    fn, metric, ns, dim, group = mm.groups()
    if group != dim:
        raise ApiError(400, "ValidationError", "GROUP BY %s: not in the schema" % group)
    period = int(q.get("Period", 0) or 0)
    if period <= 0 or period % 60:
        raise ApiError(400, "ValidationError", "a Metrics Insights query needs a Period, a multiple of 60")
    if start < sc.now() - 3 * 3600:
        raise ApiError(400, "ValidationError", "Metrics Insights queries only the most recent 3 hours of data")
    groups = {}
    for key, s in sc.series.items():
        if key[0] != ns or key[1] != metric or tuple(k for k, _ in key[2]) != (dim,) or key[4] != OWN_ACCOUNT:
            continue
        if key[3] != INSIGHTS_STAT[fn] and not (fn == "SUM" and key[3] == "Sum"):
            continue
        buckets = groups.setdefault(dict(key[2])[dim], {})
        for t, v in sc.minute_values(s).items():
            if start <= t < end:
                buckets.setdefault(t // period * period, []).append(v)
    out = []
    for value in sorted(groups):
        b = groups[value]
        if not b:
            continue
        ts = sorted(b, reverse=not ascending)
        out.append({"Id": q["Id"], "Label": value, "Timestamps": [float(t) for t in ts],
                    "Values": [aggregate(b[t], INSIGHTS_STAT[fn]) for t in ts],
                    "StatusCode": "Complete", "Messages": []})
    return out[:500]


def op_get_metric_data(sc, req):
    queries = req.get("MetricDataQueries")
    if not isinstance(queries, list) or not queries:
        raise ApiError(400, "ValidationError", "MetricDataQueries is required")
    insights = [q for q in queries if isinstance(q, dict) and str(q.get("Expression", "")).startswith("SELECT ")]
    if len(insights) > 1:
        raise ApiError(400, "ValidationError", "a GetMetricData request can hold only one Metrics Insights query")
    if len(queries) > 500:
        raise ApiError(400, "ValidationError",
                       "The collection MetricDataQueries must not have a size greater than 500.")
    if "StartTime" not in req or "EndTime" not in req:
        raise ApiError(400, "ValidationError", "StartTime and EndTime are required")
    start = parse_time(req["StartTime"], "StartTime")
    end = parse_time(req["EndTime"], "EndTime")
    if end <= start:
        raise ApiError(400, "ValidationError", "The parameter StartTime must be less than the parameter EndTime.")
    ascending = req.get("ScanBy", "TimestampDescending") == "TimestampAscending"
    chunks = []   # one entry per (Id, page part)
    ids = set()
    stat_points = {}   # Id -> {t: value}, every MetricStat (ReturnData false ones too)
    denied = set()
    for q in queries:
        qid = q.get("Id")
        if not isinstance(qid, str) or not re.match(r"^[a-z][a-zA-Z0-9_]*$", qid) or qid in ids:
            raise ApiError(400, "ValidationError", "Invalid or duplicate Id: %r" % (qid,))
        ids.add(qid)
        ms = q.get("MetricStat")
        if ms is None:
            continue
        m = ms.get("Metric", {})
        dims_q = {d["Name"]: d["Value"] for d in m.get("Dimensions", [])}
        if dims_q.get("ModelId") in sc.data.get("denied_models", []):
            # a per-query failure (one route unreadable, the rest of the request fine);
            # a hidden one fails the expression that sums it
            denied.add(qid)
            if q.get("ReturnData") is not False:
                chunks.append(forbidden(qid, q))
            continue
        period = int(ms.get("Period", 60))
        if period <= 0 or period % 60:
            raise ApiError(400, "ValidationError", "Period must be a multiple of 60")
        dims = {d["Name"]: d["Value"] for d in m.get("Dimensions", [])}
        key = Scenario.series_key(m.get("Namespace"), m.get("MetricName"), dims, ms.get("Stat"),
                                  q.get("AccountId"))
        s = sc.series.get(key)
        buckets = {}
        if s is not None:
            for t, v in sc.minute_values(s).items():
                if start <= t < end:
                    buckets.setdefault(t // period * period, []).append(v)
        stat_points[qid] = {t: aggregate(buckets[t], ms.get("Stat")) for t in buckets}
    for q in queries:
        qid = q.get("Id")
        if q.get("ReturnData") is False:
            continue
        if qid in denied:
            continue  # answered Forbidden above
        ms = q.get("MetricStat")
        if ms is None and q in insights:
            chunks.extend(insights_results(sc, q, start, end, ascending))
            continue
        if ms is None:
            # metric math: SUM([id, id, ...]) over MetricStat Ids of this request, as
            # CloudWatch sums the series present at each timestamp
            expr = q.get("Expression", "")
            mm = re.match(r"^SUM\(\[([a-z][a-zA-Z0-9_]*(?:,[a-z][a-zA-Z0-9_]*)*)\]\)$", expr or "")
            if mm and any(x in denied for x in mm.group(1).split(",")):
                chunks.append(forbidden(qid, q))
                continue
            if not mm or any(x not in stat_points for x in mm.group(1).split(",")):
                chunks.append({"Id": qid, "Label": q.get("Label", qid), "Timestamps": [], "Values": [],
                               "StatusCode": "InternalError",
                               "Messages": [{"Code": "Unsupported", "Value": "only SUM([ids]) is faked"}]})
                continue
            total = {}
            for x in mm.group(1).split(","):
                for t, v in stat_points[x].items():
                    total[t] = total.get(t, 0.0) + v
            ts = sorted(total, reverse=not ascending)
            points = [(t, total[t]) for t in ts]
            label = q.get("Label", qid)
        else:
            m = ms.get("Metric", {})
            pts = stat_points[qid]
            ts = sorted(pts, reverse=not ascending)
            points = [(t, pts[t]) for t in ts]
            label = q.get("Label", m.get("MetricName"))
        per = sc.dp_per_page if sc.dp_per_page > 0 else max(len(points), 1)
        parts = [points[i:i + per] for i in range(0, len(points), per)] or [[]]
        for i, part in enumerate(parts):
            chunks.append({"Id": qid, "Label": label,
                           "Timestamps": [float(t) for t, _ in part],
                           "Values": [v for _, v in part],
                           "StatusCode": "PartialData" if i < len(parts) - 1 else "Complete",
                           "Messages": []})
    page, nxt = paginate(chunks, sc.sizes("GetMetricData"), req.get("NextToken"), "InvalidNextToken")
    out = {"MetricDataResults": page, "Messages": sc.gmd_messages}
    if nxt:
        out["NextToken"] = nxt
    return out


def op_list_metrics(sc, req):
    metrics = sc.data.get("metrics")
    owners = None
    if metrics is None:
        metrics, owners, seen = [], [], set()
        for (ns, name, dims, _stat, account) in sc.series:
            if (ns, name, dims, account) in seen:
                continue
            seen.add((ns, name, dims, account))
            metrics.append({"Namespace": ns, "MetricName": name,
                            "Dimensions": [{"Name": k, "Value": v} for k, v in dims]})
            owners.append(account)
    metrics, owners = linked_accounts(req, metrics, owners)
    out, out_owners = [], []
    for m, owner in zip(metrics, owners):
        if req.get("Namespace") and m.get("Namespace") != req["Namespace"]:
            continue
        if req.get("MetricName") and m.get("MetricName") != req["MetricName"]:
            continue
        have = {d["Name"]: d["Value"] for d in m.get("Dimensions", [])}
        good = True
        for f in req.get("Dimensions", []):
            if f["Name"] not in have or ("Value" in f and have[f["Name"]] != f["Value"]):
                good = False
        if good:
            out.append(m)
            out_owners.append(owner)
    page, nxt = paginate(out, sc.sizes("ListMetrics"), req.get("NextToken"), "InvalidNextToken")
    res = {"Metrics": page}
    if req.get("IncludeLinkedAccounts"):
        first = decode_token(req["NextToken"], "InvalidNextToken")[0] if req.get("NextToken") else 0
        res["OwningAccounts"] = out_owners[first:first + len(page)]
    if nxt:
        res["NextToken"] = nxt
    return res


def _service_code(req):
    code = req.get("ServiceCode")
    if not isinstance(code, str) or not re.match(r"^[a-zA-Z][a-zA-Z0-9-]{1,63}$", code):
        raise ApiError(400, "IllegalArgumentException", "ServiceCode is required")
    return code


def _max_results(req):
    mr = req.get("MaxResults")
    if mr is None:
        return None
    if not isinstance(mr, int) or not 1 <= mr <= 100:
        raise ApiError(400, "IllegalArgumentException", "MaxResults must be between 1 and 100")
    return mr


def op_list_quotas(sc, req, op):
    code = _service_code(req)
    src = sc.quotas if op == "ListServiceQuotas" else sc.default_quotas
    items = [q for q in src if q["ServiceCode"] == code and
             (op != "ListServiceQuotas" or not req.get("QuotaCode") or q["QuotaCode"] == req["QuotaCode"])]
    page, nxt = paginate(items, sc.sizes(op), req.get("NextToken"), "InvalidPaginationTokenException",
                         _max_results(req))
    res = {"Quotas": page}
    if nxt:
        res["NextToken"] = nxt
    return res


# ---------------------------------------------------------------- Price List

# Amazon Bedrock token prices as the Price List API lists them, USD per 1,000 tokens:
# Claude Sonnet 4.5 in-Region, global and batch (3.30 / 16.50 / 0.33 / 4.125 per million
# in us-east-1, the shipped table's row), Claude 3 Haiku, one us-west-2 price (filtered
# out by regionCode) and a Provisioned Throughput hour (not a token price: skipped).
DEFAULT_PRODUCTS = [
    {"provider": "Anthropic", "model": "Claude Sonnet 4.5", "region": "us-east-1",
     "usagetype": "USE1-Claude-Sonnet-4.5-input-tokens", "usd": "0.0033"},
    {"provider": "Anthropic", "model": "Claude Sonnet 4.5", "region": "us-east-1",
     "usagetype": "USE1-Claude-Sonnet-4.5-output-tokens", "usd": "0.0165"},
    {"provider": "Anthropic", "model": "Claude Sonnet 4.5", "region": "us-east-1",
     "usagetype": "USE1-Claude-Sonnet-4.5-cache-read-input-tokens", "usd": "0.00033"},
    {"provider": "Anthropic", "model": "Claude Sonnet 4.5", "region": "us-east-1",
     "usagetype": "USE1-Claude-Sonnet-4.5-cache-write-input-tokens", "usd": "0.004125"},
    {"provider": "Anthropic", "model": "Claude Sonnet 4.5", "region": "us-east-1",
     "usagetype": "USE1-Claude-Sonnet-4.5-global-input-tokens", "usd": "0.003"},
    {"provider": "Anthropic", "model": "Claude Sonnet 4.5", "region": "us-east-1",
     "usagetype": "USE1-Claude-Sonnet-4.5-global-output-tokens", "usd": "0.015"},
    {"provider": "Anthropic", "model": "Claude Sonnet 4.5", "region": "us-east-1",
     "usagetype": "USE1-Claude-Sonnet-4.5-batch-input-tokens", "usd": "0.00165"},
    {"provider": "Anthropic", "model": "Claude Sonnet 4.5", "region": "us-east-1",
     "usagetype": "USE1-Claude-Sonnet-4.5-batch-output-tokens", "usd": "0.00825"},
    {"provider": "Anthropic", "model": "Claude 3 Haiku", "region": "us-east-1",
     "usagetype": "USE1-Claude-3-Haiku-input-tokens", "usd": "0.00025"},
    {"provider": "Anthropic", "model": "Claude 3 Haiku", "region": "us-east-1",
     "usagetype": "USE1-Claude-3-Haiku-output-tokens", "usd": "0.00125"},
    {"provider": "Anthropic", "model": "Claude 3 Haiku", "region": "us-west-2",
     "usagetype": "USW2-Claude-3-Haiku-input-tokens", "usd": "0.00025"},
    {"provider": "Anthropic", "model": "Claude Sonnet 4.5", "region": "us-east-1",
     "usagetype": "USE1-Claude-Sonnet-4.5-ProvisionedThroughput", "usd": "39.60", "unit": "Hours"},
]


def product_doc(p):
    """A product document as GetProducts lists it (aws_v1), from the compact form."""
    if "product" in p:
        return p
    sku = hashlib.sha256((p["usagetype"] + p["region"]).encode()).hexdigest()[:16].upper()
    term, rate = sku + ".JRTCKXETXF", sku + ".JRTCKXETXF.6YS6EN2CT7"
    return {
        "product": {"productFamily": "Amazon Bedrock", "sku": sku, "attributes": {
            "servicecode": p.get("servicecode", "AmazonBedrock"), "servicename": "Amazon Bedrock",
            "regionCode": p["region"], "location": p["region"], "locationType": "AWS Region",
            "usagetype": p["usagetype"], "operation": "Usage", "model": p["model"],
            "provider": p["provider"]}},
        "serviceCode": "AmazonBedrock",
        "terms": {"OnDemand": {term: {
            "priceDimensions": {rate: {
                "unit": p.get("unit", "1K tokens"), "endRange": "Inf", "beginRange": "0",
                "description": "%s %s" % (p["model"], p["usagetype"]), "appliesTo": [],
                "rateCode": rate, "pricePerUnit": {"USD": p["usd"]}}},
            "sku": sku, "effectiveDate": "2026-11-01T00:00:00Z", "offerTermCode": "JRTCKXETXF",
            "termAttributes": {}}}},
        "version": "20261101000000", "publicationDate": "2026-11-01T00:00:00Z"}


def op_get_products(sc, req):
    code = _service_code(req)
    if req.get("FormatVersion", "aws_v1") != "aws_v1":
        raise ApiError(400, "InvalidParameterException", "FormatVersion must be aws_v1")
    items = []
    for d in sc.products:
        attrs = {k.lower(): str(v).lower() for k, v in d["product"]["attributes"].items()}
        attrs["servicecode"] = d.get("serviceCode", "").lower()
        if attrs["servicecode"] != code.lower():
            continue
        ok = True
        for f in req.get("Filters", []):
            got = attrs.get(f["Field"].lower())
            want = f["Value"].lower()
            if f["Type"] in ("TERM_MATCH", "EQUALS"):
                ok = ok and got == want
            elif f["Type"] == "CONTAINS":
                ok = ok and got is not None and want in got
            elif f["Type"] == "ANY_OF":
                ok = ok and got in [v.strip() for v in want.split(",")]
            elif f["Type"] == "NONE_OF":
                ok = ok and got not in [v.strip() for v in want.split(",")]
        if ok:
            items.append(d)
    page, nxt = paginate(items, sc.sizes("GetProducts"), req.get("NextToken"),
                         "InvalidNextTokenException", _max_results(req))
    res = {"FormatVersion": "aws_v1", "PriceList": [json.dumps(d) for d in page]}
    if nxt:
        res["NextToken"] = nxt
    return res


def op_get_quota(sc, req):
    code = _service_code(req)
    qc = req.get("QuotaCode")
    for src in (sc.quotas, sc.default_quotas):
        for q in src:
            if q["ServiceCode"] == code and q["QuotaCode"] == qc:
                return {"Quota": q}
    raise ApiError(400, "NoSuchResourceException", "The request failed because the specified quota does not exist.")


# ---------------------------------------------------------------- cross-account, service models

def linked_accounts(req, metrics, owners):
    """ListMetrics in a monitoring account: source accounts' metrics only with
    IncludeLinkedAccounts, only OwningAccount's when given."""
    if owners is None:
        owners = [OWN_ACCOUNT] * len(metrics)
    keep = []
    for m, owner in zip(metrics, owners):
        if not req.get("IncludeLinkedAccounts"):
            if owner == OWN_ACCOUNT:
                keep.append((m, owner))
        elif not req.get("OwningAccount") or req["OwningAccount"] == owner:
            keep.append((m, owner))
    return [m for m, _ in keep], [o for _, o in keep]


MODEL_FILES = {"monitoring": "cloudwatch-2010-08-01.service-2.json",
               "servicequotas": "service-quotas-2019-06-24.service-2.json"}


def load_models():
    """The AWS service models the request bodies are checked against."""
    shared = os.environ.get("BEDTOP_SHARED") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared")
    models = {}
    for svc, name in MODEL_FILES.items():
        try:
            with open(os.path.join(shared, "testdata", "aws", name)) as f:
                models[svc] = json.load(f)
        except (OSError, ValueError):
            pass
    try:  # the Price List model: botocore's own, where it is installed
        import botocore.loaders
        models["pricing"] = botocore.loaders.Loader().load_service_model("pricing", "service-2")
    except Exception:
        pass
    return models


def check_shape(model, shape_name, value, where):
    """None when value fits the model's shape, else why not."""
    shape = model["shapes"][shape_name]
    t = shape["type"]
    if t == "structure":
        if not isinstance(value, dict):
            return "%s: expected an object" % where
        for name in shape.get("required", []):
            if name not in value:
                return "%s: missing required member %s" % (where, name)
        for k, v in value.items():
            mem = shape["members"].get(k)
            if mem is None:
                return "%s: unknown member %s" % (where, k)
            err = check_shape(model, mem["shape"], v, where + "." + k)
            if err:
                return err
        return None
    if t == "list":
        if not isinstance(value, list):
            return "%s: expected a list" % where
        if len(value) < shape.get("min", 0) or len(value) > shape.get("max", len(value)):
            return "%s: %d members (allowed %s..%s)" % (where, len(value), shape.get("min", 0), shape.get("max", "-"))
        for i, v in enumerate(value):
            err = check_shape(model, shape["member"]["shape"], v, "%s[%d]" % (where, i))
            if err:
                return err
        return None
    if t == "string":
        if not isinstance(value, str):
            return "%s: expected a string" % where
        if len(value) < shape.get("min", 0) or len(value) > shape.get("max", len(value)):
            return "%s: length %d (allowed %s..%s)" % (where, len(value), shape.get("min", 0), shape.get("max", "-"))
        if "enum" in shape and value not in shape["enum"]:
            return "%s: %r is not one of %s" % (where, value, shape["enum"])
        return None
    if t in ("integer", "long"):
        if not isinstance(value, int) or isinstance(value, bool):
            return "%s: expected an integer" % where
        if value < shape.get("min", value) or value > shape.get("max", value):
            return "%s: %d out of range" % (where, value)
        return None
    if t in ("double", "float"):
        return None if isinstance(value, (int, float)) and not isinstance(value, bool) else "%s: expected a number" % where
    if t == "boolean":
        return None if isinstance(value, bool) else "%s: expected a boolean" % where
    if t == "timestamp":
        return None if isinstance(value, (int, float, str)) and not isinstance(value, bool) else "%s: expected a timestamp" % where
    if t == "map":
        return None if isinstance(value, dict) else "%s: expected a map" % where
    return None


def check_request(models, service, op, req):
    """(model_ok, why) for a JSON request of service/op; (None, "") with no model."""
    model = models.get(service)
    if model is None or op not in model.get("operations", {}):
        return None, ""
    shape = model["operations"][op].get("input", {}).get("shape")
    if shape is None:
        return True, ""
    err = check_shape(model, shape, req, op)
    return err is None, err or ""


# ---------------------------------------------------------------- Bedrock control plane

def profile_answer(sc, ident):
    """GetInferenceProfile: the scenario's profile named by ID or ARN, filled in."""
    for p in sc.profiles:
        arn = p.get("inferenceProfileArn", "")
        pid = p.get("inferenceProfileId") or arn.rpartition("/")[2]
        if ident in (arn, pid):
            if "error" in p:
                e = p["error"]
                raise ApiError(int(e.get("status", 400)), e.get("code", "ValidationException"),
                               e.get("message", "scripted error"))
            out = {"inferenceProfileName": p.get("inferenceProfileName", "profile-" + pid),
                   "description": p.get("description", ""),
                   "createdAt": "2026-01-02T03:04:05Z", "updatedAt": "2026-01-02T03:04:05Z",
                   "inferenceProfileArn": arn, "models": p.get("models", []),
                   "inferenceProfileId": pid, "status": p.get("status", "ACTIVE"),
                   "type": p.get("type", "APPLICATION")}
            return out
    raise ApiError(404, "ResourceNotFoundException", "The specified inference profile does not exist.")


DEFAULT_SYSTEM_PROFILES = ["us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                           "eu.anthropic.claude-sonnet-4-5-20250929-v1:0",
                           "apac.anthropic.claude-sonnet-4-5-20250929-v1:0",
                           "global.anthropic.claude-sonnet-4-5-20250929-v1:0"]


PROFILE_PREFIX = re.compile(r"^(global|[a-z]{2,4}(-[a-z]+)?)\.(?=[a-z0-9]+\.)")


def system_profile_summary(p):
    """One InferenceProfileSummary of ListInferenceProfiles, as the service returns it: a
    system profile routes to its base model in each of its Regions. p is the profile's ID,
    or {"id": ..., "regions": [...]} (default us-east-1 and us-west-2)."""
    pid = p if isinstance(p, str) else p["id"]
    regions = ["us-east-1", "us-west-2"] if isinstance(p, str) else p.get("regions", ["us-east-1"])
    base = PROFILE_PREFIX.sub("", pid)
    return {"inferenceProfileName": pid, "description": "system profile " + pid,
            "createdAt": "2026-01-02T03:04:05Z", "updatedAt": "2026-01-02T03:04:05Z",
            "inferenceProfileArn": "arn:aws:bedrock:%s:%s:inference-profile/%s" % (regions[0], OWN_ACCOUNT, pid),
            "models": [{"modelArn": "arn:aws:bedrock:%s::foundation-model/%s" % (r, base)} for r in regions],
            "inferenceProfileId": pid, "status": "ACTIVE", "type": "SYSTEM_DEFINED"}


DEFAULT_FOUNDATION_MODELS = [
    {"modelId": "anthropic.claude-sonnet-4-5-20250929-v1:0"},
    {"modelId": "anthropic.claude-3-haiku-20240307-v1:0"},
]


def foundation_model_summary(m):
    """One FoundationModelSummary of ListFoundationModels: the scenario's {"modelId", and
    optionally "status" (ACTIVE default, LEGACY) and the lifecycle times "legacyTime",
    "publicExtendedAccessTime", "endOfLifeTime", "startOfLifeTime" (ISO 8601, as the
    service model's timestampFormat says)}."""
    mid = m["modelId"]
    vendor = mid.split(".", 1)[0]
    life = {"status": m.get("status", "ACTIVE")}
    for k in ("startOfLifeTime", "legacyTime", "publicExtendedAccessTime", "endOfLifeTime"):
        if k in m:
            life[k] = m[k]
    return {"modelArn": "arn:aws:bedrock:us-east-1::foundation-model/" + mid, "modelId": mid,
            "modelName": m.get("modelName", mid), "providerName": m.get("providerName", vendor.capitalize()),
            "inputModalities": ["TEXT"], "outputModalities": ["TEXT"],
            "responseStreamingSupported": True, "customizationsSupported": [],
            "inferenceTypesSupported": m.get("inferenceTypesSupported", ["ON_DEMAND", "INFERENCE_PROFILE"]),
            "modelLifecycle": life}


def list_foundation_models(h, sc, entry, query):
    """ListFoundationModels: GET /foundation-models[?byProvider=P...], one answer (the API
    does not paginate); "list_models_error": {"status", "code", "message"} refuses it."""
    err = sc.data.get("list_models_error")
    if err:
        return bedrock_error(h, entry, int(err.get("status", 403)), err.get("code", "AccessDeniedException"),
                             err.get("message", "User is not authorized to perform: bedrock:ListFoundationModels"))
    q = urllib.parse.parse_qs(query)
    models = sc.data.get("foundation_models", DEFAULT_FOUNDATION_MODELS)
    prov = q.get("byProvider", [None])[0]
    out = [foundation_model_summary(m) for m in models
           if prov is None or m["modelId"].split(".", 1)[0] == prov.lower()]
    entry["status"] = 200
    h.send_raw(200, json.dumps({"modelSummaries": out}).encode(), "bedrock")


def list_tags(h, sc, entry, body):
    """ListTagsForResource: POST /listTagsForResource {"resourceARN"} -> {"tags": [...]}."""
    err = sc.data.get("tags_error")
    if err:
        return bedrock_error(h, entry, int(err.get("status", 403)), err.get("code", "AccessDeniedException"),
                             err.get("message", "User is not authorized to perform: bedrock:ListTagsForResource"))
    try:
        req = json.loads(body or b"{}")
    except ValueError:
        req = None
    arn = req.get("resourceARN") if isinstance(req, dict) else None
    if not isinstance(arn, str) or not arn.startswith("arn:") or set(req) != {"resourceARN"}:
        return bedrock_error(h, entry, 400, "ValidationException",
                             "1 validation error detected: Value at 'resourceARN' failed to satisfy constraint")
    tags = sc.data.get("tags", {})
    if arn not in tags:
        return bedrock_error(h, entry, 404, "ResourceNotFoundException", "The resource %s was not found" % arn)
    entry["status"] = 200
    out = [{"key": k, "value": v} for k, v in tags[arn].items()]
    h.send_raw(200, json.dumps({"tags": out}).encode(), "bedrock")


def list_profiles(h, sc, entry, query):
    """ListInferenceProfiles (system-defined): pages of inferenceProfileSummaries."""
    err = sc.data.get("list_profiles_error")
    if err:
        return bedrock_error(h, entry, int(err.get("status", 403)), err.get("code", "AccessDeniedException"),
                             err.get("message", "User is not authorized to perform: bedrock:ListInferenceProfiles"))
    q = urllib.parse.parse_qs(query)
    ids = sc.data.get("system_profiles", DEFAULT_SYSTEM_PROFILES)
    try:
        n = int(q.get("maxResults", ["100"])[0])
        offset = int(q.get("nextToken", ["0"])[0])
    except ValueError:
        return bedrock_error(h, entry, 400, "ValidationException", "bad maxResults or nextToken")
    if q.get("type", ["SYSTEM_DEFINED"])[0] != "SYSTEM_DEFINED":
        ids = []
    page = ids[offset:offset + n]
    res = {"inferenceProfileSummaries": [system_profile_summary(i) for i in page]}
    if offset + n < len(ids):
        res["nextToken"] = str(offset + n)
    entry["status"] = 200
    h.send_raw(200, json.dumps(res).encode(), "bedrock")


def handle_bedrock_control(h, st, sc, entry, body, n_op, n_all):
    """GET /inference-profiles/{id}, SigV4 service "bedrock", REST-JSON."""
    path, _, query = h.path.partition("?")
    ok, code, msg, auth = verify_sigv4(h.command, path, query, list(h.headers.items()), body,
                                       st.keys, sc.server_clock(), rest=True)
    entry["sig_ok"] = ok
    entry["sig_error"] = code or ""
    if auth:
        entry["service"], entry["region"] = auth["service"], auth["region"]
    token = h.headers.get("X-Amz-Security-Token")
    if token is not None or st.args.session_token is not None:
        entry["token_ok"] = token is not None and token == st.args.session_token
    listing = path == "/inference-profiles"
    models = path == "/foundation-models"
    tagging = path == "/listTagsForResource"
    rule = st.fault_for("ListTagsForResource" if tagging else "ListFoundationModels" if models else
                        "ListInferenceProfiles" if listing else "GetInferenceProfile", n_op, n_all)
    if rule is not None:
        entry["fault"] = rule.get("action")
        if h.apply_fault(rule, entry, "bedrock"):
            return
    if not ok:
        return bedrock_error(h, entry, 403, code, msg)
    if auth["service"] != "bedrock":
        return bedrock_error(h, entry, 403, "InvalidSignatureException",
                             "Credential should be scoped to correct service: 'bedrock'.")
    if st.args.session_token is not None and not entry["token_ok"]:
        return bedrock_error(h, entry, 403, "UnrecognizedClientException",
                             "The security token included in the request is invalid.")
    if tagging:
        if h.command != "POST":
            return bedrock_error(h, entry, 400, "ValidationException", "expected POST /listTagsForResource")
        return list_tags(h, sc, entry, body)
    if models:
        if h.command != "GET":
            return bedrock_error(h, entry, 400, "ValidationException", "expected GET /foundation-models")
        return list_foundation_models(h, sc, entry, query)
    if listing:
        return list_profiles(h, sc, entry, query)
    ident = urllib.parse.unquote(path[len("/inference-profiles/"):])
    if h.command != "GET" or not ident or "/" in path[len("/inference-profiles/"):]:
        return bedrock_error(h, entry, 400, "ValidationException", "expected GET /inference-profiles/{id}")
    try:
        res = profile_answer(sc, ident)
    except ApiError as e:
        return bedrock_error(h, entry, e.status, e.code, e.message)
    entry["status"] = 200
    h.send_raw(200, json.dumps(res).encode(), "bedrock")


def bedrock_error(h, entry, status, code, message):
    entry["status"] = status
    entry["error"] = code
    h.send_raw(status, json.dumps({"message": message}).encode(), "bedrock",
               [("x-amzn-ErrorType", "%s:http://internal.amazon.com/coral/com.amazon.bedrock/" % code)])


# ---------------------------------------------------------------- HTTP server

class State:
    def __init__(self, args, scenario):
        self.args = args
        self.sc = scenario
        self.keys = {args.access_key: args.secret_key}
        self.models = load_models()
        self.lock = threading.Lock()
        self.counts = {}
        self.total = 0
        self.log = open(args.log, "a", buffering=1) if args.log else None

    def count(self, op):
        with self.lock:
            self.total += 1
            self.counts[op] = self.counts.get(op, 0) + 1
            return self.total, self.counts[op]

    def fault_for(self, op, n_op, n_all, region=None, body=b""):
        for rule in self.sc.faults:
            rop = rule.get("op", "*")
            if rop not in ("*", op):
                continue
            if rule.get("region") not in (None, region):
                continue
            if "while_file" in rule and not os.path.exists(rule["while_file"]):
                continue
            if "body_has" in rule and rule["body_has"].encode() not in (body or b""):
                continue
            n = n_all if rop == "*" else n_op
            first = int(rule.get("nth", 1))
            cnt = int(rule.get("count", 1))
            if n >= first and (cnt == 0 or n < first + cnt):
                return rule
        return None

    def write_log(self, entry):
        if self.log:
            with self.lock:
                self.log.write(json.dumps(entry, sort_keys=True) + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake_aws/1"
    sys_version = ""

    def log_message(self, fmt, *args):
        pass

    def date_time_string(self, timestamp=None):
        st = self.server.state
        return super().date_time_string(st.sc.server_clock() if timestamp is None else timestamp)

    def do_GET(self):
        self.handle_any()

    def do_PUT(self):
        self.handle_any()

    def do_POST(self):
        self.handle_any()

    def handle_any(self):
        st = self.server.state
        sc = st.sc
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self.send_json(413, {"__type": "RequestEntityTooLarge", "message": "body too large"}, None)
            return
        body = self.rfile.read(length) if length else b""
        if fake_identity.handle(self, st, body, verify_sigv4, sc.server_clock()):
            return
        target = self.headers.get("X-Amz-Target", "")
        service, op = OPS.get(target, (None, target.rpartition(".")[2] or "?"))
        if self.path.startswith("/inference-profiles/"):
            service, op = "bedrock", "GetInferenceProfile"
        elif self.path.startswith("/inference-profiles?") or self.path == "/inference-profiles":
            service, op = "bedrock", "ListInferenceProfiles"
        elif self.path.startswith("/foundation-models?") or self.path == "/foundation-models":
            service, op = "bedrock", "ListFoundationModels"
        elif self.path == "/listTagsForResource":
            service, op = "bedrock", "ListTagsForResource"
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        # a Metrics Insights GetMetricData (unseen callers) is counted, and matched by fault
        # rules, as "GetMetricData:Insights": a "GetMetricData" rule's nth counts the polls
        count_op = op
        if op == "GetMetricData" and isinstance(parsed, dict) and any(
                isinstance(q, dict) and str(q.get("Expression", "")).startswith("SELECT ")
                for q in parsed.get("MetricDataQueries") or []):
            count_op = "GetMetricData:Insights"
        n_all, n_op = st.count(count_op)
        entry = {"n": n_all, "op": op, "target": target or None, "sig_ok": False, "sig_error": "",
                 "token_ok": None, "attempt": None, "amz_date": self.headers.get("X-Amz-Date"),
                 "body": None, "status": 0, "error": None, "fault": None,
                 "user_agent": self.headers.get("User-Agent"), "client_port": self.client_address[1],
                 "path": self.path, "model_ok": None, "model_error": ""}
        m = re.search(r"attempt=(\d+)", self.headers.get("amz-sdk-request", ""))
        if m:
            entry["attempt"] = int(m.group(1))
        entry["body"] = parsed
        self._entry = entry
        try:
            self.process(st, sc, entry, body, service, op, n_op, n_all, count_op)
        finally:
            self.flush_log()

    def flush_log(self):
        """Logs the request once, before any answer byte leaves, so a client that
        has its answer always finds the line in the log."""
        entry = getattr(self, "_entry", None)
        if entry is not None:
            self._entry = None
            self.server.state.write_log(entry)

    def process(self, st, sc, entry, body, service, op, n_op, n_all, count_op=None):
        if service == "bedrock":
            return handle_bedrock_control(self, st, sc, entry, body, n_op, n_all)
        path, _, query = self.path.partition("?")
        ok, code, msg, auth = verify_sigv4(self.command, path, query, list(self.headers.items()), body,
                                           st.keys, sc.server_clock())
        entry["sig_ok"] = ok
        entry["sig_error"] = code or ""
        if auth:
            entry["service"], entry["region"] = auth["service"], auth["region"]
        token = self.headers.get("X-Amz-Security-Token")
        if token is not None or st.args.session_token is not None:
            entry["token_ok"] = token is not None and token == st.args.session_token
        rule = st.fault_for(count_op or op, n_op, n_all, entry.get("region"), body)
        if rule is not None:
            entry["fault"] = rule.get("action")
            if self.apply_fault(rule, entry, service):
                return
        if not ok:
            return self.send_error_json(entry, service, 403, code, msg)
        if fake_identity.check_request(st, auth, token):
            return self.send_error_json(entry, service, *fake_identity.check_request(st, auth, token))
        if token is not None and token in sc.expired_tokens:
            return self.send_error_json(entry, service, 400, "ExpiredTokenException",
                                        "The security token included in the request is expired")
        if st.args.session_token is not None and not entry["token_ok"]:
            return self.send_error_json(entry, service, 403, "UnrecognizedClientException",
                                        "The security token included in the request is invalid.")
        if token is not None and "x-amz-security-token" not in auth["signed_headers"]:
            return self.send_error_json(entry, service, 403, "IncompleteSignatureException",
                                        "x-amz-security-token must be signed")
        if service is None:
            return self.send_error_json(entry, service, 400, "UnknownOperationException",
                                        "unknown X-Amz-Target %r" % (self.headers.get("X-Amz-Target"),))
        if auth["service"] != service:
            return self.send_error_json(entry, service, 403, "InvalidSignatureException",
                                        "Credential should be scoped to correct service: '%s'." % service)
        if self.command != "POST" or self.headers.get("Content-Type", "") != CONTENT_TYPES[service]:
            return self.send_error_json(entry, service, 400, "UnknownOperationException",
                                        "expected POST with Content-Type %s" % CONTENT_TYPES[service])
        try:
            req = json.loads(body or b"{}")
            if not isinstance(req, dict):
                raise ValueError
        except ValueError:
            return self.send_error_json(entry, service, 400, "SerializationException", "body is not a JSON object")
        entry["model_ok"], entry["model_error"] = check_request(st.models, service, op, req)
        if entry["model_ok"] is False:
            return self.send_error_json(entry, service, 400, "ValidationError", entry["model_error"])
        try:
            if op == "GetMetricData":
                res = op_get_metric_data(sc, req)
                if any(str(q.get("Expression", "")).startswith("SELECT ") for q in req["MetricDataQueries"]):
                    # the series a Metrics Insights query read (what it is billed by)
                    entry["insights_series"] = len(res["MetricDataResults"])
            elif op == "ListMetrics":
                res = op_list_metrics(sc, req)
            elif op in ("ListServiceQuotas", "ListAWSDefaultServiceQuotas"):
                res = op_list_quotas(sc, req, op)
            elif op == "GetProducts":
                res = op_get_products(sc, req)
            else:
                res = op_get_quota(sc, req)
        except ApiError as e:
            return self.send_error_json(entry, service, e.status, e.code, e.message)
        except (KeyError, TypeError, AttributeError, ValueError) as e:
            return self.send_error_json(entry, service, 400, "ValidationError", "bad request: %s" % e)
        entry["status"] = 200
        self.send_json(200, res, service)

    def apply_fault(self, rule, entry, service):
        """Returns True when the fault answered (or dropped) the request."""
        action = rule.get("action")
        if action == "delay":
            time.sleep(float(rule.get("secs", 2)))
            return False
        if action == "throttle":
            if service == "servicequotas":
                self.send_error_json(entry, service, 400, "TooManyRequestsException", "Rate exceeded")
            else:
                self.send_error_json(entry, service, 400, "ThrottlingException", "Rate exceeded")
            return True
        if action == "5xx":
            code = "ServiceException" if service == "servicequotas" else "InternalServiceFault"
            self.send_error_json(entry, service, int(rule.get("status", 500)), code, "Internal failure")
            return True
        if action == "expired_token":
            self.send_error_json(entry, service, 400, "ExpiredTokenException",
                                 "The security token included in the request is expired")
            return True
        if action == "skew":
            now = self.server.state.sc.server_clock()
            self.send_error_json(entry, service, 403, "InvalidSignatureException",
                                 "Signature expired: %s is now earlier than %s (%s - 5 min.)" % (
                                     entry.get("amz_date"), fmt_amz(now - 300), fmt_amz(now)))
            return True
        if action == "error":
            self.send_error_json(entry, service, int(rule.get("status", 400)), rule.get("code", "ValidationError"),
                                 rule.get("message", "scripted error"))
            return True
        if action == "malformed":
            entry["status"] = 200
            self.send_raw(200, b'{"MetricDataResults": [{"Id": "q1", "Timestamps": [1.7E9,', service)
            return True
        if action == "truncate":
            data = json.dumps({"MetricDataResults": [], "Messages": [], "Padding": "x" * 200}).encode()
            entry["status"] = 200
            self.flush_log()
            self.send_response(200)
            self.send_header("Content-Type", CONTENT_TYPES.get(service, "application/json"))
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[:len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            return True
        if action == "reset":
            self.flush_log()
            self.close_connection = True
            try:
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:
                pass
            self.connection.close()
            return True
        if action == "hang":
            self.flush_log()
            time.sleep(float(rule.get("secs", 3600)))
            self.close_connection = True
            return True
        return False

    def send_error_json(self, entry, service, status, code, message):
        entry["status"] = status
        entry["error"] = code
        key = "Message" if service in ("servicequotas", "pricing") else "message"
        typ = code
        if service == "monitoring" and code in CW_QUERY_CODES:
            typ = "com.amazonaws.cloudwatch#" + code
        payload = {"__type": typ, key: message}
        extra = []
        if service == "monitoring":
            sender = "Receiver" if status >= 500 else "Sender"
            extra.append(("x-amzn-query-error", "%s;%s" % (CW_QUERY_CODES.get(code, code), sender)))
        self.send_json(status, payload, service, extra)

    def send_json(self, status, obj, service, extra=()):
        self.send_raw(status, json.dumps(obj).encode(), service, extra)

    def send_raw(self, status, data, service, extra=()):
        entry = getattr(self, "_entry", None)
        if entry is not None:
            entry["status"] = status
        self.flush_log()
        self.send_response(status)
        self.send_header("x-amzn-RequestId", "11111111-2222-3333-4444-%012d" % self.server.state.total)
        self.send_header("Content-Type", CONTENT_TYPES.get(service, "application/x-amz-json-1.0"))
        self.send_header("Content-Length", str(len(data)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    ap = argparse.ArgumentParser(description="fake CloudWatch + Service Quotas endpoint (tests only)")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--log")
    ap.add_argument("--scenario")
    ap.add_argument("--access-key", default=DEFAULT_AK)
    ap.add_argument("--secret-key", default=DEFAULT_SK)
    ap.add_argument("--session-token")
    ap.add_argument("--now", type=float)
    ap.add_argument("--selftest")
    fake_identity.add_args(ap)
    args = ap.parse_args()
    if args.selftest:
        return selftest(args.selftest)
    data = {}
    if args.scenario:
        try:
            with open(args.scenario) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            print("fake_aws: scenario %s: %s" % (args.scenario, e), file=sys.stderr)
            return 2
    srv = Server(("127.0.0.1", args.port), Handler)
    srv.state = State(args, Scenario(data, args.now))
    fake_identity.setup(srv.state, args)
    print("PORT %d" % srv.server_address[1], flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
