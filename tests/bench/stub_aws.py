#!/usr/bin/env python3
"""stub_aws.py: a fast, NON-verifying AWS endpoint for make bench (never for tests).

tests/fake/fake_aws.py checks every SigV4 signature and every request against the
service models: right for tests, but at 5,000-20,000 routes its Python checks are
what a benchmark would time. This stub answers the calls bedtop makes at fleet scale,
and nothing else, as fast as one Python process can:

  GetMetricData                 every query with ReturnData, one datapoint per Period
                                over [StartTime, EndTime) (one value per metric name:
                                the answer is the same for every route); "SUM([..])"
                                expressions answered like a MetricStat
  ListMetrics                   the 14 AWS/Bedrock metrics of each model, ModelId
                                dimension, 500 a page (AWS/BedrockMantle: none)
  ListServiceQuotas,            the quotas of the first --quotas models ("On-demand
  ListAWSDefaultServiceQuotas   model inference tokens per minute for MODEL"),
                                MaxResults a page
  GET /inference-profiles...    none listed; one asked for by ID: not found

Models are gen.py's (route_model(i) for i < --routes). Signatures are not checked.
Prints "PORT n" when listening. --log FILE writes one JSON line per request
({"n", "op", "body"}, as the fake's log) for the bench's accounting.
HTTP/1.1 with keep-alive over asyncio; one process, no threads.
"""
import argparse
import asyncio
import json
import os
import time
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen import CW_METRICS, route_model  # noqa: E402

# one value per metric name (tokens, calls, latencies): plausible, not a scenario
VALUES = {"Invocations": "120", "InputTokenCount": "240000", "OutputTokenCount": "36000",
          "CacheReadInputTokenCount": "70000", "CacheWriteInputTokenCount": "12000",
          "CacheReadInputTokens": "70000", "CacheWriteInputTokens": "12000",
          "InvocationThrottles": "0", "InvocationClientErrors": "0", "InvocationServerErrors": "0",
          "InvocationLatency": "1800", "TimeToFirstToken": "240", "EstimatedTPMQuotaUsage": "300000"}


class Stub:
    def __init__(self, a):
        self.models = [route_model(i)[0] for i in range(a.routes)]
        kinds = {"on-demand": "On-demand", "cross-region": "Cross-region", "global": "Global cross-region"}
        # each with its UsageMetric (the ModelId it counts), as Service Quotas lists them
        self.quotas = [{"ServiceCode": "bedrock", "ServiceName": "Amazon Bedrock",
                        "QuotaArn": "arn:aws:servicequotas:us-east-1:123456789012:bedrock/L-STUB%05d" % i,
                        "QuotaCode": "L-STUB%05d" % i,
                        "QuotaName": "%s model inference tokens per minute for %s"
                                     % (kinds[route_model(i)[2]], m),
                        "Value": float([400000, 1000000, 2000000, 4000000][i % 4]),
                        "Unit": "None", "Adjustable": True, "GlobalQuota": False,
                        "UsageMetric": {"MetricNamespace": "AWS/Bedrock",
                                        "MetricName": "EstimatedTPMQuotaUsage",
                                        "MetricDimensions": {"ModelId": m},
                                        "MetricStatisticRecommendation": "Sum"}}
                       for i, m in enumerate(self.models[:a.quotas])]
        self.metrics = [{"Namespace": "AWS/Bedrock", "MetricName": name,
                         "Dimensions": [{"Name": "ModelId", "Value": m}]}
                        for m in self.models for name, _ in dict.fromkeys(CW_METRICS)]
        self.series = {}  # (start, end, period, metric) -> '"Timestamps":[..],"Values":[..]'
        self.n = 0
        self.log = open(a.log, "a") if a.log else None

    def points(self, start, end, period, metric):
        key = (start, end, period, metric)
        s = self.series.get(key)
        if s is None:
            t0 = -(-start // period) * period
            ts = range(t0, end, period)
            v = VALUES.get(metric, "1")
            s = '"Timestamps":[%s],"Values":[%s]' % (",".join(str(t) for t in ts),
                                                     ",".join(v for _ in ts))
            if len(self.series) > 4096:
                self.series.clear()
            self.series[key] = s
        return s

    def get_metric_data(self, req):
        start, end = int(req["StartTime"]), int(req["EndTime"])
        metric_of = {}
        for q in req["MetricDataQueries"]:
            ms = q.get("MetricStat")
            if ms:
                metric_of[q["Id"]] = (ms["Metric"]["MetricName"], int(ms.get("Period", 60)))
        out = []
        for q in req["MetricDataQueries"]:
            if q.get("ReturnData") is False:
                continue
            qid = q["Id"]
            if qid in metric_of:
                name, period = metric_of[qid]
            else:  # SUM([a,b]): the first term's metric, one Period
                first = q.get("Expression", "").partition("[")[2].split(",")[0].rstrip("])")
                name, period = metric_of.get(first, ("", int(q.get("Period", 60))))
            out.append('{"Id":"%s","Label":"%s",%s,"StatusCode":"Complete"}'
                       % (qid, qid, self.points(start, end, period, name)))
        return '{"MetricDataResults":[%s],"Messages":[]}' % ",".join(out)

    @staticmethod
    def page(items, token, size):
        first = int(token) if token and str(token).isdigit() else 0
        res = items[first:first + size]
        nxt = str(first + size) if first + size < len(items) else None
        return res, nxt

    def list_metrics(self, req):
        items = self.metrics if req.get("Namespace", "AWS/Bedrock") == "AWS/Bedrock" else []
        if req.get("MetricName"):
            items = [m for m in items if m["MetricName"] == req["MetricName"]]
        res, nxt = self.page(items, req.get("NextToken"), 500)
        out = {"Metrics": res}
        if nxt:
            out["NextToken"] = nxt
        return json.dumps(out, separators=(",", ":"))

    def list_quotas(self, req):
        res, nxt = self.page(self.quotas, req.get("NextToken"), int(req.get("MaxResults") or 100))
        out = {"Quotas": res}
        if nxt:
            out["NextToken"] = nxt
        return json.dumps(out, separators=(",", ":"))

    def answer(self, method, path, headers, body):
        target = headers.get("x-amz-target", "")
        op = target.rpartition(".")[2] or ("ListInferenceProfiles" if "?" in path or
                                           path == "/inference-profiles" else "GetInferenceProfile")
        self.n += 1
        req = json.loads(body) if body else {}
        if self.log:
            self.log.write(json.dumps({"n": self.n, "op": op, "t": time.time(), "body": req}) + "\n")
            self.log.flush()
        ctype = "application/x-amz-json-1.1"
        if op == "GetMetricData":
            return 200, "application/x-amz-json-1.0", self.get_metric_data(req)
        if op == "ListMetrics":
            return 200, "application/x-amz-json-1.0", self.list_metrics(req)
        if op in ("ListServiceQuotas", "ListAWSDefaultServiceQuotas"):
            return 200, ctype, self.list_quotas(req)
        if op == "ListInferenceProfiles":
            return 200, "application/json", '{"inferenceProfileSummaries":[]}'
        if op == "GetInferenceProfile":
            return 404, "application/json", '{"message":"not found"}'
        return 400, ctype, '{"__type":"UnknownOperationException","message":"stub: %s"}' % op

    async def conn(self, reader, writer):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path = lines[0].split(" ")[:2]
                headers = {}
                for ln in lines[1:]:
                    k, _, v = ln.partition(":")
                    if k:
                        headers[k.strip().lower()] = v.strip()
                n = int(headers.get("content-length") or 0)
                body = await reader.readexactly(n) if n else b""
                if headers.get("expect", "").lower() == "100-continue":
                    pass  # the body was sent anyway (curl waits 1 s at most)
                status, ctype, text = self.answer(method, path, headers, body)
                data = text.encode()
                writer.write(b"HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n"
                             b"x-amzn-RequestId: stub\r\n\r\n"
                             % (status, b"OK" if status == 200 else b"Error", ctype.encode(),
                                len(data)) + data)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()


async def main_async(a):
    st = Stub(a)
    srv = await asyncio.start_server(st.conn, "127.0.0.1", a.port, limit=1 << 20)
    print("PORT %d" % srv.sockets[0].getsockname()[1], flush=True)
    async with srv:
        await srv.serve_forever()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--routes", type=int, default=50)
    ap.add_argument("--quotas", type=int, default=0)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--log", default="")
    try:
        asyncio.run(main_async(ap.parse_args()))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
