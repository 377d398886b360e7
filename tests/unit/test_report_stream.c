/* bt_report_write (render/report.h): check's report handed to a sink as it is
 * written, a route at a time (JSON) or between sections and warnings (text), is the
 * report bt_report_render writes whole, byte for byte; and it is handed in pieces
 * of about the sink's size, not held whole (at 20,000 routes the whole JSON was a
 * 480 MB tree and its 92 MB text). 400 routes on shared and separate quotas, with
 * usage and throttles so each has figures, warnings, a group and spend. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/model.h"
#include "io/conffile.h"
#include "render/report.h"
#include "tests/tap.h"

#define NR 400
#define T0 1796205600 /* 2026-12-02T10:00:00Z */

struct pieces {
    struct bt_buf all;
    int n;
    size_t biggest;
};

static void take(void *ctx, struct bt_buf *b)
{
    struct pieces *p = ctx;
    p->n++;
    if (b->len > p->biggest)
        p->biggest = b->len;
    bt_buf_add(&p->all, b->buf, b->len);
    bt_buf_reset(b);
}

int main(void)
{
    struct bt_config c;
    bt_config_init(&c);
    for (int i = 0; i < NR; i++) {
        char name[16];
        snprintf(name, sizeof name, "r%03d", i);
        int k = bt_config_add_route(&c, name);
        /* four routes a model: each model's routes share its quota */
        snprintf(c.routes[k].model, sizeof c.routes[k].model, "anthropic.claude-3-haiku-%d", i / 4);
        c.routes[k].quota[BT_Q_TPM].value = 400000;
        c.routes[k].quota[BT_Q_TPM].source = BT_QS_CONFIG;
    }
    bt_config_finish(&c);
    struct bt_store s;
    bt_store_init(&s, NR, 180);
    for (int i = 0; i < NR; i++)
        for (int m = 0; m < 30; m++) {
            int64_t t = T0 - 60 * (30 - m);
            static const enum bt_signal sigs[] = {BT_SIG_INVOCATIONS, BT_SIG_INPUT_TOKENS,
                                                  BT_SIG_OUTPUT_TOKENS, BT_SIG_THROTTLES};
            static const double vals[] = {60, 90000, 12000, 3};
            for (size_t k = 0; k < sizeof sigs / sizeof sigs[0]; k++)
                bt_store_add(&s, &(struct bt_sample){.t = t, .route = i, .signal = sigs[k],
                                                     .value = vals[k] * (1 + i % 3)},
                             t + 120);
        }
    struct bt_report rep;
    bt_report_build(&rep, &c, &s, T0);
    bt_report_decide(&rep);
    static const enum bt_format fmts[] = {BT_FMT_JSON, BT_FMT_TEXT, BT_FMT_PROMETHEUS};
    static const char *const names[] = {"JSON", "text", "Prometheus"};
    for (int f = 0; f < 3; f++) {
        struct bt_buf whole = {0}, out = {0};
        bt_report_render(&rep, fmts[f], false, &whole);
        struct pieces p = {0};
        bt_report_write(&rep, fmts[f], false, &out, &(struct bt_report_sink){take, &p});
        OK(out.len == 0, "%s: the sink took everything (%zu bytes left)", names[f], out.len);
        OK(p.all.len == whole.len && !memcmp(p.all.buf, whole.buf, whole.len),
           "%s: the pieces joined are the report written whole (%zu and %zu bytes)", names[f],
           p.all.len, whole.len);
        if (fmts[f] != BT_FMT_PROMETHEUS) {
            /* out is handed on once it holds 64 kB; what is added to it at once is
             * one route's object, one warning, or (spend's groups) up to 64 kB of
             * printed items: no piece reaches twice that */
            OK(p.n > 5 && p.biggest < (128u << 10) + (16u << 10),
               "%s: %zu bytes in %d pieces, the biggest %zu bytes", names[f], whole.len, p.n,
               p.biggest);
        }
        bt_buf_free(&whole);
        bt_buf_free(&out);
        bt_buf_free(&p.all);
    }
    bt_report_free(&rep);
    bt_store_free(&s);
    bt_config_free(&c);
    return tap_done();
}
