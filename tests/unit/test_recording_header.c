/* Issue 26 break 12: loading a recording header was quadratic in routes (100,000 routes:
 * 88 s, 96 % in cJSON_GetArrayItem, which walks the array from its start for each index).
 * Judged by the growth of the CPU time, not by a wall-clock bound: 20,000 routes against
 * 2,000 is 10 times the work when linear and 100 times when quadratic; the bound (40)
 * sits between, with room for a loaded machine and cache effects.
 * Issue 37 break 7: a 3.3 MB header of 100,000 routes took 1.67 GB (a route is ~4 kB in
 * memory however short its text): a recording holds at most 20,000 routes (man 5
 * bedtop-recording), and one more is refused with a clear error, before the store. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/recording.h"
#include "core/util.h"
#include "tests/tap.h"

static char *header(int n, size_t *len)
{
    struct bt_buf b = {0};
    bt_buf_puts(&b, "{\"format\":\"bedtop-recording\",\"version\":\"1.1\",\"created\":\"2026-11-29T10:00:00Z\","
                    "\"signals\":[\"invocations\",\"input_tokens\"],\"routes\":[");
    for (int i = 0; i < n; i++)
        bt_buf_printf(&b, "%s{\"name\":\"r%06d\",\"model\":\"anthropic.claude-3-haiku-20240307-v1:0\"}",
                      i ? "," : "", i);
    bt_buf_puts(&b, "]}\n{\"t\":1795946460,\"s\":[[0,1795946400,1795946460,[0,1]]]}\n");
    *len = b.len;
    return b.buf;
}

static char last_err[300];

/* CPU seconds to open a recording of n routes (best of three: the least disturbed). */
static double load_cpu(int n, int *nroutes)
{
    size_t len;
    char *text = header(n, &len);
    double best = -1;
    for (int k = 0; k < 3; k++) {
        struct bt_replay rp;
        char err[300] = "";
        clock_t t0 = clock();
        bool ok = bt_replay_open_mem(&rp, "big.rec", text, len, NULL, NULL, err, sizeof err);
        double cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
        *nroutes = ok ? rp.cfg.nroutes : -1;
        if (ok)
            bt_replay_free(&rp);
        else
            printf("# %s\n", err);
        if (!ok && k == 0)
            bt_strlcpy(last_err, err, sizeof last_err);
        if (best < 0 || cpu < best)
            best = cpu;
    }
    free(text);
    return best;
}

int main(void)
{
    int small_n = 0, big_n = 0;
    double small = load_cpu(2000, &small_n);
    double big = load_cpu(20000, &big_n);
    OK(small_n == 2000 && big_n == 20000, "break 12: headers of 2,000 and 20,000 routes load whole (%d, %d)",
       small_n, big_n);
    /* 1 ms of slack on the small side: its time can round to 0 on a fast machine */
    double ratio = big / (small + 0.001);
    printf("# CPU: 2,000 routes %.4f s, 20,000 routes %.4f s, ratio %.1f\n", small, big, ratio);
    OK(ratio < 40, "break 12: 10 times the routes costs less than 40 times the CPU (%.1f): not quadratic", ratio);

    int over_n = 0;
    last_err[0] = '\0';
    load_cpu(20001, &over_n);
    OK(over_n == -1 && strstr(last_err, "big.rec:1: recording header has more than 20000 routes"),
       "r4 break 7: a header of 20,001 routes is refused, naming the limit (%d: %s)", over_n, last_err);

    /* one header member far beyond any real one ("signals" of 200,000 names, 2 MB)
     * is refused by its size, not parsed into a tree */
    struct bt_buf b = {0};
    bt_buf_puts(&b, "{\"format\":\"bedtop-recording\",\"version\":\"2.0\",\"signals\":[");
    for (int i = 0; i < 200000; i++)
        bt_buf_puts(&b, i ? ",\"invocations\"" : "\"invocations\"");
    bt_buf_puts(&b, "],\"routes\":[{\"name\":\"a\",\"model\":\"m\"}]}\n{\"t\":1795946460}\n");
    struct bt_replay rp;
    char err[300] = "";
    bool ok = bt_replay_open_mem(&rp, "sig.rec", b.buf, b.len, NULL, NULL, err, sizeof err);
    OK(!ok && strstr(err, "sig.rec:1: recording header's \"signals\" is ") && strstr(err, "(at most 65536)"),
       "r4 break 7: a 2.8 MB \"signals\" member is refused by its size (%s)", err);
    if (ok)
        bt_replay_free(&rp);
    bt_buf_free(&b);

    /* Issue 37 break 15: the marker array grew by one element a marker (60,000 markers:
     * 120 s under ASan); it grows geometrically: 1,000 markers take a capacity of
     * 1,024 (16 doubled six times), not 1,000 reallocations */
    bt_buf_puts(&b, "{\"format\":\"bedtop-recording\",\"version\":\"2.0\",\"created\":\"2026-11-29T10:00:00Z\","
                    "\"routes\":[{\"name\":\"a\",\"model\":\"m\"}]}\n{\"t\":1795946460,\"e\":[");
    for (int i = 0; i < 1000; i++)
        bt_buf_printf(&b, "%s{\"t\":%d,\"type\":\"marker\",\"text\":\"m%d\"}", i ? "," : "", 1795946400 + i, i);
    bt_buf_puts(&b, "]}\n");
    ok = bt_replay_open_mem(&rp, "m.rec", b.buf, b.len, NULL, NULL, err, sizeof err);
    OK(ok && rp.nmarkers == 1000 && rp.capmarkers == 1024 && !strcmp(rp.markers[999].text, "m999"),
       "r4 break 15: 1,000 markers in a capacity of 1,024 (%zu in %zu: %s)", ok ? rp.nmarkers : 0,
       ok ? rp.capmarkers : 0, ok ? rp.markers[999].text : err);
    if (ok)
        bt_replay_free(&rp);
    bt_buf_free(&b);
    return tap_done();
}
