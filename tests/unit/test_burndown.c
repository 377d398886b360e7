/* The burndown table as AWS publishes it today (data/burndown.conf, read from
 * "How tokens are counted in Amazon Bedrock", 2026-12-01; DOMAIN.md "Burndown"):
 * 15 for Claude 4.8, 10 for Claude Opus 5 / Opus 5.5 / Sonnet 5 / Fable 5.1 and for
 * GPT-5.6 Sol / Terra / Luna on bedrock-runtime only, 5 for the other Claude 4.x
 * and Claude 3.7 Sonnet, 1 otherwise; rows scoped to an endpoint; the row used is
 * named. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/burndown.h"
#include "core/model.h"
#include "core/util.h"
#include "io/conffile.h"
#include "tests/tap.h"

static void test_installed_table(void)
{
    char path[1024], err[256] = "";
    snprintf(path, sizeof path, "%s/data/burndown.conf", tap_srcdir());
    struct bt_burndown b = {0};
    OK(bt_burndown_load_file(&b, path, err, sizeof err), "data/burndown.conf loads (%s)", err);
    static const struct {
        const char *id;
        int endpoint;
        double want;
    } cases[] = {
        /* 15: Claude models version 4.8 */
        {"anthropic.claude-opus-4-8", BT_EP_RUNTIME, 15},
        {"us.anthropic.claude-opus-4-8-20261015-v1:0", BT_EP_RUNTIME, 15},
        {"global.anthropic.claude-sonnet-4-8-v1:0", BT_EP_RUNTIME, 15},
        /* 10: the fifth generation and GPT-5.6 on runtime */
        {"anthropic.claude-opus-5", BT_EP_RUNTIME, 10},
        {"us.anthropic.claude-opus-5-5-v1:0", BT_EP_RUNTIME, 10},
        {"anthropic.claude-sonnet-5-v1:0", BT_EP_RUNTIME, 10},
        {"eu.anthropic.claude-fable-5-1", BT_EP_RUNTIME, 10},
        {"openai.gpt-5-6-sol", BT_EP_RUNTIME, 10},
        {"openai.gpt-5-6-terra-v1:0", BT_EP_RUNTIME, 10},
        {"us.openai.gpt-5-6-luna", BT_EP_RUNTIME, 10},
        /* GPT-5.6 on mantle: the runtime-only rows do not apply, the catch-all does */
        {"openai.gpt-5-6-luna", BT_EP_MANTLE, 1},
        /* 5: the other Claude 4.x and 3.7 Sonnet */
        {"anthropic.claude-opus-4-7", BT_EP_RUNTIME, 5},
        {"anthropic.claude-sonnet-4-5-20250929-v1:0", BT_EP_RUNTIME, 5},
        {"us.anthropic.claude-haiku-4-5-20251001-v1:0", BT_EP_RUNTIME, 5},
        {"anthropic.claude-opus-4-1-20250805-v1:0", BT_EP_RUNTIME, 5},
        {"us.anthropic.claude-3-7-sonnet-20250219-v1:0", BT_EP_RUNTIME, 5},
        /* 1: everything else */
        {"anthropic.claude-3-5-haiku-20241022-v1:0", BT_EP_RUNTIME, 1},
        {"anthropic.claude-3-haiku-20240307-v1:0", BT_EP_RUNTIME, 1},
        {"amazon.nova-pro-v1:0", BT_EP_RUNTIME, 1},
        {"openai.gpt-oss-120b-1:0", BT_EP_RUNTIME, 1},
    };
    for (size_t i = 0; i < BT_ARRAY_LEN(cases); i++) {
        const struct bt_burndown_rule *r = bt_burndown_find(&b, cases[i].id, cases[i].endpoint);
        double got = r ? r->factor : 1;
        OK(got == cases[i].want, "%s on %s: burndown %g (got %g from %s)", cases[i].id,
           bt_endpoint_name((enum bt_endpoint)cases[i].endpoint), cases[i].want, got,
           r ? r->origin : "no row");
    }
    /* the row used is named, so BURNDOWN_MISMATCH can say which */
    struct bt_route rt;
    memset(&rt, 0, sizeof rt);
    bt_strlcpy(rt.model, "us.anthropic.claude-opus-4-8", sizeof rt.model);
    bt_route_burndown(&rt, &b);
    OK(rt.burndown == 15 && !strcmp(rt.burndown_source, "table") &&
           strstr(rt.burndown_row, "burndown.conf:") && strstr(rt.burndown_row, "= 15"),
       "a route names its row: %s", rt.burndown_row);
    bt_strlcpy(rt.model, "openai.gpt-5-6-sol", sizeof rt.model);
    bt_route_burndown(&rt, &b);
    OK(rt.burndown == 10 && strstr(rt.burndown_row, "(runtime)"),
       "a runtime-scoped row says so: %s", rt.burndown_row);
    bt_strlcpy(rt.model, "amazon.nova-pro-v1:0", sizeof rt.model);
    bt_route_burndown(&rt, &b);
    OK(rt.burndown == 1 && !strcmp(rt.burndown_source, "default"),
       "the catch-all row is a default, not a table entry");
    bt_burndown_free(&b);
}

static void test_scoped_rows(void)
{
    struct bt_burndown b = {0};
    char err[256] = "";
    OK(bt_burndown_parse(&b, "* = 1\nacme.x* = 7 endpoint=runtime\nacme.x* = 3  endpoint=mantle ; c\n",
                         "b.conf", err, sizeof err) && b.n == 3,
       "rows with endpoint scopes parse (%s)", err);
    const struct bt_burndown_rule *r = bt_burndown_find(&b, "acme.x1", BT_EP_RUNTIME);
    OK(r && r->factor == 7 && !strcmp(r->origin, "b.conf:2"), "runtime row for runtime (%s)",
       r ? r->origin : "none");
    r = bt_burndown_find(&b, "acme.x1", BT_EP_MANTLE);
    OK(r && r->factor == 3 && !strcmp(r->origin, "b.conf:3"), "mantle row for mantle");
    bt_burndown_free(&b);
    OK(!bt_burndown_parse(&b, "acme.* = 7 endpoint=sideways\n", "b.conf", err, sizeof err) &&
           strstr(err, "b.conf:1: bad burndown row"),
       "an unknown endpoint scope is refused with file:line (%s)", err);
    bt_burndown_free(&b);
    OK(!bt_burndown_parse(&b, "acme.* = 7 runtime\n", "b.conf", err, sizeof err),
       "a scope without endpoint= is refused");
    bt_burndown_free(&b);
}

int main(void)
{
    test_installed_table();
    test_scoped_rows();
    return tap_done();
}
