/* The recording reader's hand-written poll-line scanner (core/recscan.c):
 * it must read exactly what cJSON reads. The oracle is cJSON itself (and
 * strtod under it): every sample of a line is compared with the value cJSON
 * parses from the same text; damaged lines must be refused with the reasons
 * the cJSON reader gave, adding nothing to the store. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/plausible.h"
#include "core/recording.h"
#include "core/util.h"
#include "tests/tap.h"

#define T0 1795910400 /* 2026-11-29T00:00:00Z */

static const char *header =
    "{\"format\":\"bedtop-recording\",\"version\":\"1.0\",\"created\":\"2026-11-29T00:00:00Z\","
    "\"mode\":\"live\",\"signals\":[\"invocations\",\"input_tokens\",\"output_tokens\","
    "\"latency_avg_ms\"],\"routes\":[{\"name\":\"a\",\"model\":\"m1\"},{\"name\":\"b\",\"model\":\"m2\"}]}\n";

/* Signal index in the file -> ours (the header above lists four). */
static enum bt_signal sig_of(int k)
{
    static const enum bt_signal map[] = {BT_SIG_INVOCATIONS, BT_SIG_INPUT_TOKENS,
                                         BT_SIG_OUTPUT_TOKENS, BT_SIG_LATENCY_AVG};
    return map[k];
}

static bool open_lines(struct bt_replay *rp, const char *body, char *err, size_t n)
{
    struct bt_buf b = {0};
    bt_buf_puts(&b, header);
    bt_buf_puts(&b, body);
    bool ok = bt_replay_open_mem(rp, "t.rec", b.buf, b.len, NULL, NULL, err, n);
    bt_buf_free(&b);
    return ok;
}

/* Every [route, minute, arrival, [sig, value...]] of a line, as cJSON reads it,
 * must be what the store holds (values are stored as doubles, exactly). */
static bool read_as_cjson(const char *line, const char *what, int *nsamples)
{
    char err[300];
    struct bt_replay rp;
    char body[4096];
    snprintf(body, sizeof body, "%s\n", line);
    bool ok = open_lines(&rp, body, err, sizeof err);
    if (!ok)
        printf("# %s: %s\n# %s\n", what, err, line);
    cJSON *o = cJSON_Parse(line);
    if (!o)
        printf("# %s: cJSON does not parse it\n# %s\n", what, line);
    const cJSON *g;
    int n = 0, bad = 0;
    cJSON_ArrayForEach(g, cJSON_GetObjectItem(o, "s")) {
        int r = cJSON_GetArrayItem(g, 0)->valueint;
        int64_t m = (int64_t)cJSON_GetArrayItem(g, 1)->valuedouble;
        const cJSON *kv = cJSON_GetArrayItem(g, 3);
        for (const cJSON *it = kv->child; it && it->next; it = it->next->next) {
            if (!cJSON_IsNumber(it) || !cJSON_IsNumber(it->next) || it->valueint < 0 || it->valueint > 3)
                continue;
            double got = bt_store_at(&rp.store, r, sig_of(it->valueint), m);
            /* a value no source can have (-7 tokens, 1e308) is read, then refused by
             * the store (core/plausible.h): it must not be there */
            char why[160];
            bool plausible = bt_sample_plausible(sig_of(it->valueint), it->next->valuedouble, why,
                                                 sizeof why);
            double want = plausible ? it->next->valuedouble : NAN;
            n++;
            if (!(got == want || (isnan(got) && isnan(want)))) {
                bad++;
                printf("# %s: route %d signal %d: %.17g, cJSON %.17g\n", what, r, it->valueint,
                       got, it->next->valuedouble);
            }
        }
    }
    bool same = ok && rp.skipped == 0 && n > 0 && bad == 0;
    cJSON_Delete(o);
    if (ok)
        bt_replay_free(&rp);
    *nsamples = n;
    return same;
}

static void same_as_cjson(const char *line, const char *what)
{
    int n;
    bool same = read_as_cjson(line, what, &n);
    OK(same, "%s: %d samples as cJSON reads them", what, n);
}

static void refused(const char *line, const char *why, const char *what)
{
    char err[300], body[2048];
    struct bt_replay rp;
    snprintf(body, sizeof body, "%s\n{\"t\":%d,\"s\":[[0,%d,%d,[0,7]]]}\n", line, T0 + 70, T0,
             T0 + 70);
    bool ok = open_lines(&rp, body, err, sizeof err);
    bool named = ok && strstr(rp.first_problem, why) && strstr(rp.first_problem, "t.rec:2:");
    /* the good line after it still counts; nothing of the bad one got in */
    OK(named && rp.skipped == 1 && rp.npolls == 1 && rp.store.nsamples == 1,
       "%s: refused as \"%s\" (%s)", what, why, ok ? rp.first_problem : err);
    if (ok)
        bt_replay_free(&rp);
}

int main(void)
{
    char line[1024];
    snprintf(line, sizeof line,
             "{\"t\":%d,\"s\":[[0,%d,%d,[0,12,1,345678,2,9012,3,1234.5]],"
             "[1,%d,%d,[0,0.1,1,1e3,2,-7,3,123456789012345678]]],\"e\":[]}",
             T0 + 70, T0, T0 + 70, T0, T0 + 70);
    same_as_cjson(line, "integers, decimals, exponents, a 18-digit integer");
    snprintf(line, sizeof line,
             "{\"t\":%d,\"s\":[[0,%d,%d,[3,0.30000000000000004,2,1.7976931348623157e308,"
             "1,2.2250738585072014e-308,0,999999999999999]]]}",
             T0 + 70, T0, T0 + 70);
    same_as_cjson(line, "values strtod rounds (17 digits, extremes)");
    {
        /* numbers of 1 to 18 digits, either side of the point, signed or not, and
         * signal indexes written as 1.9 or -0.5: the fast path ends at 15 digits and
         * must hand the rest to strtod as cJSON does (xorshift, fixed seed) */
        uint64_t x = 0x9e3779b97f4a7c15ull;
        int lines = 0, worse = 0, samples = 0;
        for (int i = 0; i < 300; i++) {
            size_t o = (size_t)snprintf(line, sizeof line, "{\"t\":%d,\"s\":[", T0 + 300);
            for (int g = 0; g < 4; g++) {
                o += (size_t)snprintf(line + o, sizeof line - o, "%s[%d,%d,%d,[", g ? "," : "",
                                      g % 2, T0 + 60 * g, T0 + 300);
                for (int k = 0; k < 4; k++) {
                    char num[40];
                    size_t nn = 0;
                    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                    if (x % 7 == 0)
                        num[nn++] = '-';
                    int whole = 1 + (int)((x >> 8) % 18), frac = (x >> 16) % 4 ? 0 : (int)((x >> 24) % 6);
                    for (int d = 0; d < whole; d++)
                        num[nn++] = (char)('0' + (x >> (d * 3 % 60)) % 10);
                    if (frac) {
                        num[nn++] = '.';
                        for (int d = 0; d < frac; d++)
                            num[nn++] = (char)('0' + (x >> (d * 5 % 60 + 1)) % 10);
                    }
                    num[nn] = '\0';
                    static const char *odd[4] = {"-0.5", "1.9", "2.0", "3.00"}; /* each its own signal */
                    const char *sig = (x >> 40) % 9 == 0 ? odd[k] : NULL;
                    char sk[8];
                    snprintf(sk, sizeof sk, "%d", k);
                    o += (size_t)snprintf(line + o, sizeof line - o, "%s%s,%s", k ? "," : "",
                                          sig ? sig : sk, num);
                }
                o += (size_t)snprintf(line + o, sizeof line - o, "]]");
            }
            snprintf(line + o, sizeof line - o, "]}");
            char what[64];
            snprintf(what, sizeof what, "random numbers, line %d", i);
            int n;
            worse += !read_as_cjson(line, what, &n);
            samples += n;
            lines++;
        }
        OK(worse == 0, "%d lines of random numbers (%d samples) read as cJSON reads them", lines,
           samples);
    }
    snprintf(line, sizeof line,
             " { \"x\" : {\"y\":[1,\"]\",null]} , \"t\" : %d , \"s\" : [ [ 1 , %d , %d , [ 0 , 5 ,"
             " 1 , \"no\" , \"sig\" , 6 , 2 , 8 ] , \"extra\" ] ] } trailing",
             T0 + 70, T0, T0 + 70);
    same_as_cjson(line, "whitespace, other keys, non-number pairs, extra items, trailing text");

    refused("{\"t\":1795910470,\"s\":[[0,1,2,[0,1]]", "not valid JSON", "unterminated");
    refused("{\"t\":1795910470,\"s\":[[0,1795910400,1795910470,[0,1]],]}", "not valid JSON",
            "a trailing comma");
    refused("{\"t\":1795910470,\"s\":[[0,1795910400,1795910470,[0,1]]],\"z\":[1,,2]}",
            "not valid JSON", "broken JSON after the samples");
    refused("{\"s\":[]}", "no poll time", "no t");
    refused("{\"t\":\"soon\",\"s\":[]}", "no poll time", "t not a number");
    refused("{\"t\":1e999,\"s\":[]}", "no poll time", "t out of range");
    refused("{\"t\":1795910470,\"s\":{}}", "must be arrays", "s an object");
    refused("{\"t\":1795910470,\"s\":null}", "must be arrays", "s null");
    refused("{\"t\":1795910470,\"e\":5}", "must be arrays", "e a number");
    refused("{\"t\":1795910470,\"s\":[[0,1795910400,1795910470,[0,1]],[2,1795910400,1795910470,[0,1]]]}",
            "bad sample group", "a route past the header's (the first group must not get in)");
    refused("{\"t\":1795910470,\"s\":[[0,1795910400,1795910470,[0,1,2]]]}", "bad sample group",
            "an odd signal/value list");
    refused("{\"t\":1795910470,\"s\":[[0,1795910400,1795910470]]}", "bad sample group",
            "three items");
    refused("{\"t\":1795910470,\"s\":[[0,1e999,1795910470,[0,1]]]}", "bad sample group",
            "a minute out of range");
    refused("{\"t\":1795910470,\"s\":[5]}", "bad sample group", "a number for a group");

    /* The store is sized to the minutes the samples span: a backfill line with a
     * day before the first poll keeps its oldest minute. */
    struct bt_buf b = {0};
    bt_buf_printf(&b, "{\"t\":%d,\"s\":[[0,%d,%d,[0,11]],[0,%d,%d,[0,22]]]}\n", T0 + 70,
                  T0 - 86400, T0 + 70, T0, T0 + 70);
    char err[300];
    struct bt_replay rp;
    bool ok = open_lines(&rp, b.buf, err, sizeof err);
    OK(ok && bt_store_at(&rp.store, 0, BT_SIG_INVOCATIONS, T0 - 86400) == 11 &&
           bt_store_at(&rp.store, 0, BT_SIG_INVOCATIONS, T0) == 22,
       "a day of backfill before the first poll is all kept");
    if (ok)
        bt_replay_free(&rp);
    bt_buf_free(&b);
    return tap_done();
}
