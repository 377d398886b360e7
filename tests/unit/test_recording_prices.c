/* Issue 36: a recording's header carries the spend settings and the price rows in
 * effect (format 2.2, man 5 bedtop-recording), written from a config by the real
 * writer and read back by the real reader; a hostile "prices" (a huge price, a
 * negative one, NaN, a 1 MB row, a control character in a pattern, more rows than
 * the limit) is refused naming the file and the row, and spend settings out of the
 * config's bounds are ignored (the default stands). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/recording.h"
#include "core/util.h"
#include "tests/tap.h"

static const char poll[] = "\n{\"t\":1795946460,\"s\":[[0,1795946400,1795946460,[0,1]]]}\n";

/* opens a header built from prices (the "prices" member's text, NULL: none) and the
 * route's extra members */
static bool open_hdr(struct bt_replay *rp, const char *route_extra, const char *config,
                     const char *prices, char *err, size_t n)
{
    struct bt_buf b = {0};
    bt_buf_printf(&b, "{\"format\":\"bedtop-recording\",\"version\":\"2.2\",\"created\":"
                      "\"2026-11-29T10:00:00Z\",\"signals\":[\"invocations\"],\"config\":{%s},"
                      "\"routes\":[{\"name\":\"a\",\"model\":\"anthropic.claude-3-haiku-20240307-v1:0\"%s}]",
                  config, route_extra);
    if (prices)
        bt_buf_printf(&b, ",\"prices\":%s", prices);
    bt_buf_puts(&b, "}");
    bt_buf_puts(&b, poll);
    err[0] = '\0';
    bool ok = bt_replay_open_mem(rp, "h.rec", b.buf, b.len, NULL, NULL, err, n);
    bt_buf_free(&b);
    return ok;
}

static void refused(const char *prices, const char *want, const char *what)
{
    struct bt_replay rp;
    char err[400];
    bool ok = open_hdr(&rp, "", "", prices, err, sizeof err);
    OK(!ok && strstr(err, "h.rec:1") && strstr(err, want), "%s is refused, naming the file (%s)", what,
       ok ? "opened" : err);
    if (ok)
        bt_replay_free(&rp);
}

int main(void)
{
    /* the round trip: a config's spend keys and [prices] rows through the writer and
     * the reader */
    static const char conf[] =
        "[bedtop]\nregion = us-east-1\nbudget_usd_per_day = 5000\nspend_spike_factor = 7\n"
        "spend_spike_floor = 11\nspend_spike_minutes = 4\n"
        "[route flex]\nmodel = anthropic.claude-3-haiku-20240307-v1:0\ntier = flex\n"
        "budget_usd_per_day = 123\n"
        "[route pt]\nmodel = arn:aws:bedrock:us-east-1:123456789012:provisioned-model/abcd\n"
        "base_model = anthropic.claude-3-haiku-20240307-v1:0\nmodel_units = 2\n"
        "[team search]\nbudget_usd_per_day = 50\n[group flex]\nbudget_usd_per_day = 100\n"
        "[prices]\nanthropic.claude-3-haiku* = in=0.20 out=0.50 cache_read=0.02 tier=flex "
        "region=us-* source=ours date=2026-11-30\n"
        "anthropic.claude-3-haiku* = unit_hour=40 inference=provisioned endpoint=runtime\n";
    struct bt_config c;
    bt_config_defaults(&c); /* no installed table: the config's [prices] rows alone */
    bt_burndown_add(&c.burndown, "*", 1, -1, "test");
    char err[400] = "";
    bool ok = bt_config_parse_string(&c, conf, "t.conf", err, sizeof err);
    OK(ok, "the config parses (%s)", err);
    char *h = bt_recorder_header(&c, "live", 1795946400);
    size_t hl = strlen(h);
    char *text = malloc(hl + sizeof poll);
    memcpy(text, h, hl);
    memcpy(text + hl, poll, sizeof poll);
    bt_recorder_header_free(h);
    struct bt_replay rp;
    ok = bt_replay_open_mem(&rp, "rt.rec", text, hl + sizeof poll - 1, NULL, NULL, err, sizeof err);
    free(text);
    OK(ok, "the header reads back (%s)", err);
    if (ok) {
        const struct bt_config *r = &rp.cfg;
        OK(rp.prices_recorded && r->prices_loaded && r->prices.n == 2,
           "its two price rows are the replay's table (%d rows)", r->prices.n);
        const struct bt_price_row *p = &r->prices.rows[0], *q = &r->prices.rows[1];
        OK(r->prices.n == 2 && !strcmp(p->pattern, "anthropic.claude-3-haiku*") && p->tier == BT_SVC_FLEX &&
           p->in == 0.2 && p->out == 0.5 && p->cache_read == 0.02 && isnan(p->cache_write) &&
           isnan(p->unit_hour) && !strcmp(p->region, "us-*") && p->endpoint == -1 && p->inference == -1 &&
           !strcmp(p->source, "ours") && !strcmp(p->date, "2026-11-30") &&
           !strcmp(p->origin, "config [prices]"),
           "the flex row comes back field by field");
        OK(r->prices.n == 2 && q->unit_hour == 40 && isnan(q->in) && q->inference == BT_INF_PROVISIONED &&
           q->endpoint == BT_EP_RUNTIME && q->tier == BT_SVC_STANDARD && !strcmp(q->region, "*"),
           "the provisioned row too, later (it wins)");
        OK(r->nroutes == 2 && r->routes[0].tier == BT_SVC_FLEX && r->routes[0].budget_usd_per_day == 123 &&
           isnan(r->routes[0].model_units) && r->routes[1].model_units == 2 &&
           r->routes[1].tier == BT_SVC_STANDARD && isnan(r->routes[1].budget_usd_per_day),
           "the routes' tier, model_units and budget_usd_per_day come back");
        OK(r->budget_usd_per_day == 5000 && r->spend_spike_factor == 7 && r->spend_spike_floor == 11 &&
           r->spend_spike_minutes == 4, "the global budget and spend_spike_* keys come back");
        OK(r->nbudgets == 2 && r->budgets[0].team && !strcmp(r->budgets[0].name, "search") &&
               r->budgets[0].usd == 50 && !r->budgets[1].team &&
               !strcmp(r->budgets[1].name, "flex") && r->budgets[1].usd == 100,
           "the [team] and [group] budgets come back (%d)", r->nbudgets);
        bt_replay_free(&rp);
    }
    bt_config_free(&c);

    /* a file without "prices" (before 2.2): the reader leaves the table to the
     * installed one (io/recfile.c) */
    ok = open_hdr(&rp, "", "", NULL, err, sizeof err);
    OK(ok && !rp.prices_recorded && !rp.cfg.prices_loaded && rp.cfg.routes[0].tier == BT_SVC_STANDARD &&
       rp.cfg.spend_spike_minutes == 3, "a header without prices opens, its table left to the installed one");
    if (ok)
        bt_replay_free(&rp);
    /* an empty "prices": recorded with no table; nothing is priced, as live */
    ok = open_hdr(&rp, "", "", "[]", err, sizeof err);
    OK(ok && rp.prices_recorded && rp.cfg.prices.n == 0, "an empty prices array is a recorded empty table");
    if (ok)
        bt_replay_free(&rp);

    /* hostile budgets: a control character in a name, a budget out of bounds, a name
     * too long, neither team nor group, not an array: each left out, the good one kept */
    ok = open_hdr(&rp, "",
                  "\"budgets\":[{\"team\":\"a\\u001b[2J\",\"budget_usd_per_day\":5},"
                  "{\"team\":\"b\",\"budget_usd_per_day\":1e99},{\"group\":\"a\",\"budget_usd_per_day\":-1},"
                  "{\"budget_usd_per_day\":5},{\"team\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\",\"budget_usd_per_day\":5},"
                  "{\"team\":\"ok\",\"budget_usd_per_day\":7}]",
                  NULL, err, sizeof err);
    OK(ok && rp.cfg.nbudgets == 1 && !strcmp(rp.cfg.budgets[0].name, "ok") && rp.cfg.budgets[0].usd == 7,
       "hostile budgets are left out, the good one kept (%d)", ok ? rp.cfg.nbudgets : -1);
    if (ok)
        bt_replay_free(&rp);
    ok = open_hdr(&rp, "", "\"budgets\":{\"team\":\"x\"}", NULL, err, sizeof err);
    OK(ok && rp.cfg.nbudgets == 0, "budgets not an array: none");
    if (ok)
        bt_replay_free(&rp);

    /* spend settings out of the config's bounds: ignored, the default stands */
    ok = open_hdr(&rp, ",\"tier\":\"gold\",\"model_units\":1e300,\"budget_usd_per_day\":-5",
                  "\"budget_usd_per_day\":1e99,\"spend_spike_factor\":0.5,\"spend_spike_floor\":-1,"
                  "\"spend_spike_minutes\":1e9,\"prices_note\":\"\\u001b[2Jowned\"",
                  "[]", err, sizeof err);
    OK(ok && rp.cfg.routes[0].tier == BT_SVC_STANDARD && isnan(rp.cfg.routes[0].model_units) &&
       isnan(rp.cfg.routes[0].budget_usd_per_day) && isnan(rp.cfg.budget_usd_per_day) &&
       rp.cfg.spend_spike_factor == 3 && rp.cfg.spend_spike_floor == 5 && rp.cfg.spend_spike_minutes == 3 &&
       !rp.cfg.prices_note[0],
       "a tier 'gold', 1e300 model units, negative budgets, a 0.5 factor, 1e9 minutes and an escape "
       "sequence in prices_note are ignored (%s)", ok ? "" : err);
    if (ok)
        bt_replay_free(&rp);

    /* hostile rows */
    refused("[{\"pattern\":\"x*\",\"region\":\"*\",\"in\":1e999,\"out\":1}]",
            "price row 1: \"in\" is not a price of 0 to 1000000 USD", "a price of 1e999 (infinity)");
    refused("[{\"pattern\":\"x*\",\"region\":\"*\",\"in\":1,\"out\":1},"
            "{\"pattern\":\"y*\",\"region\":\"*\",\"in\":2e6,\"out\":1}]",
            "price row 2: \"in\" is not a price", "a price of 2,000,000 USD in row 2");
    refused("[{\"pattern\":\"x*\",\"region\":\"*\",\"in\":1,\"out\":-1}]", "\"out\" is not a price",
            "a negative price");
    refused("[{\"pattern\":\"x*\",\"region\":\"*\",\"in\":\"1\",\"out\":1}]", "\"in\" is not a price",
            "a price as a string");
    refused("[{\"pattern\":\"x*\",\"region\":\"*\",\"in\":NaN,\"out\":1}]", "not a bedtop recording",
            "NaN (not JSON)");
    refused("[{\"pattern\":\"x\\u001b[31m*\",\"region\":\"*\",\"in\":1,\"out\":1}]",
            "price row 1: pattern has a control character", "an escape sequence in a pattern");
    refused("[{\"pattern\":\"x*\",\"region\":\"*\",\"in\":1,\"out\":1,\"source\":\"a\\nb\"}]",
            "source has a control character", "a newline in a source");
    refused("[{\"pattern\":\"\",\"region\":\"*\",\"in\":1,\"out\":1}]", "needs a model pattern",
            "an empty pattern");
    refused("[{\"pattern\":\"x*\",\"region\":\"*\",\"in\":1}]", "needs in= and out=", "in without out");
    refused("[{\"pattern\":\"x*\",\"region\":\"*\",\"date\":\"2026-13-01\",\"in\":1,\"out\":1}]",
            "date", "a month 13");
    refused("{\"pattern\":\"x*\"}", "\"prices\" is not an array", "prices as an object");
    refused("[7]", "price row 1: not an object", "a number for a row");

    /* a 1 MB row and a 300-byte pattern: refused by size, not copied cut */
    struct bt_buf b = {0};
    bt_buf_puts(&b, "[{\"pattern\":\"x*\",\"region\":\"*\",\"in\":1,\"out\":1,\"source\":\"");
    for (int i = 0; i < 1 << 20; i++)
        bt_buf_putc(&b, 'a');
    bt_buf_puts(&b, "\"}]");
    refused(bt_buf_str(&b), "price row 1: 10", "a 1 MB row");
    bt_buf_free(&b);
    bt_buf_puts(&b, "[{\"pattern\":\"");
    for (int i = 0; i < 300; i++)
        bt_buf_putc(&b, 'p');
    bt_buf_puts(&b, "\",\"region\":\"*\",\"in\":1,\"out\":1}]");
    refused(bt_buf_str(&b), "\"pattern\" is not a string of at most 191 bytes", "a 300-byte pattern");
    bt_buf_free(&b);
    /* 20,001 rows: the limit */
    bt_buf_putc(&b, '[');
    for (int i = 0; i <= 20000; i++)
        bt_buf_printf(&b, "%s{\"pattern\":\"m%d*\",\"region\":\"*\",\"in\":1,\"out\":2}", i ? "," : "", i);
    bt_buf_putc(&b, ']');
    refused(bt_buf_str(&b), "more than 20000 price rows", "20,001 price rows");
    bt_buf_free(&b);

    /* a row of a tier this reader does not know (a newer writer's) is skipped */
    ok = open_hdr(&rp, "", "",
                  "[{\"pattern\":\"x*\",\"region\":\"*\",\"tier\":\"turbo\",\"in\":1,\"out\":1},"
                  "{\"pattern\":\"y*\",\"region\":\"*\",\"tier\":\"flex\",\"in\":1,\"out\":1}]",
                  err, sizeof err);
    OK(ok && rp.cfg.prices.n == 1 && !strcmp(rp.cfg.prices.rows[0].pattern, "y*"),
       "a row of an unknown tier is skipped, the others read (%s)", ok ? "" : err);
    if (ok)
        bt_replay_free(&rp);
    return tap_done();
}
