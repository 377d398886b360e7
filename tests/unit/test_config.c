/* Config parsing: every key of DESIGN.md, and errors as file:line: why. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "io/conffile.h"
#include "tests/tap.h"

static const char *design_example =
    "[bedtop]\n"
    "profile = prod\n"
    "region = us-east-1\n"
    "interval = 60\n"
    "warn_headroom = 20%\n"
    "crit_headroom = 5%\n"
    "\n"
    "[route triage]\n"
    "model = us.anthropic.claude-sonnet-4-5-20250929-v1:0\n"
    "region = us-east-1          ; a route may also set its own profile (another account)\n"
    "endpoint = runtime          ; runtime | mantle\n"
    "inference = cross-region    ; on-demand | cross-region | global\n"
    "max_tokens = 1024           ; the output allowance callers request\n"
    "priority = online           ; online | offline\n"
    "admission = http://127.0.0.1:9464/metrics\n"
    "quota_code = L-F4DDD3EB     ; optional: the Service Quotas code to use for TPM\n"
    "quota_tpm = 2000000         ; optional override of the applied quota\n"
    "burndown = 5                ; optional override of the burndown table\n"
    "\n"
    "[route agents]\n"
    "model = anthropic.claude-opus-4-7\n"
    "endpoint = mantle\n"
    "max_tokens = 2000\n"
    "quota_input_tpm = 20000000  ; overrides Service Quotas\n"
    "quota_output_tpm = 4000000\n";

static void test_design_example(void)
{
    struct bt_config c;
    char err[512] = "";
    bt_config_init(&c);
    bool ok = bt_config_parse_string(&c, design_example, "design.conf", err, sizeof err);
    OK(ok, "DESIGN.md example parses (%s)", err);
    if (!ok)
        return;
    OK(c.nroutes == 2, "two routes");
    STREQ(c.profile, "prod", "profile");
    NEAR(c.interval, 60, 0, "interval");
    OK(c.warn.pct && c.warn.value == 20 && c.crit.value == 5, "thresholds as percentages");
    const struct bt_route *t = &c.routes[0];
    STREQ(t->name, "triage", "route name");
    OK(t->inference == BT_INF_CROSS_REGION && t->endpoint == BT_EP_RUNTIME, "inference and endpoint");
    NEAR(t->max_tokens, 1024, 0, "max_tokens (inline comment stripped)");
    STREQ(t->admission, "http://127.0.0.1:9464/metrics", "admission URL");
    STREQ(t->quota_code, "L-F4DDD3EB", "quota_code");
    OK(t->quota[BT_Q_TPM].value == 2000000 && t->quota[BT_Q_TPM].source == BT_QS_CONFIG, "quota_tpm from config");
    NEAR(t->burndown, 5, 0, "burndown override");
    OK(t->line == 8, "route line recorded (%d)", t->line);
    const struct bt_route *a = &c.routes[1];
    OK(a->endpoint == BT_EP_MANTLE && a->quota[BT_Q_INPUT_TPM].value == 20000000 &&
       a->quota[BT_Q_OUTPUT_TPM].value == 4000000, "mantle quotas");
    STREQ(a->region, "us-east-1", "route inherits the global region");
    OK(a->inference == BT_INF_ON_DEMAND, "inference from model ID (no prefix: on-demand)");
    bt_config_free(&c);
}

static void expect_error(const char *text, const char *want, const char *what)
{
    struct bt_config c;
    char err[512] = "";
    bt_config_init(&c);
    bool ok = bt_config_parse_string(&c, text, "bad.conf", err, sizeof err);
    OK(!ok && strstr(err, want) != NULL, "%s -> '%s'", what, err);
    bt_config_free(&c);
}

static void test_errors(void)
{
    expect_error("[bedtop]\ninterval = 60\nbogus = 1\n", "bad.conf:3: unknown key 'bogus' in [bedtop]",
                 "unknown key names file:line");
    expect_error("[route a]\nmodel = x\nmax_tokens = lots\n", "bad.conf:3: bad number for max_tokens",
                 "bad number names file:line");
    expect_error("[bedtop]\n\n[route lonely]\nregion = us-east-1\n", "bad.conf:3: route 'lonely' has no model",
                 "route without model names the section line");
    expect_error("[route a]\nmodel = x\nendpoint = grpc\n", "bad.conf:3: bad endpoint 'grpc'",
                 "bad endpoint");
    expect_error("[routes]\nmodel = x\n", "unknown section [routes]", "unknown section");
    expect_error("[bedtop]\nwarn_headroom = 120%\n", "bad.conf:2: bad warn_headroom", "bad threshold");
    expect_error("[bedtop]\nwarn_headroom = 5%\ncrit_headroom = 10%\n", "crit_headroom (10) must not exceed",
                 "crit above warn");
    expect_error("[route a]\nmodel = x\nquota_input_tpm = 5\n", "apply to endpoint = mantle only",
                 "mantle quota on a runtime route");
    expect_error("this is not ini\n", "bad.conf:1:", "garbage line");
    expect_error("[route a]\nmodel = x\n[route a]\nmodel = y\n", "bad.conf:3: route 'a' defined twice",
                 "duplicate route");
    expect_error("[bedtop]\nhistory = 30d\n", "history at most 15d", "history bound");
    expect_error("[route a]\nmodel = x\naccount = 11112222333\n",
                 "bad.conf:3: bad account '11112222333' (an AWS account ID: 12 digits)", "account: 11 digits");
    expect_error("[bedtop]\naccount = 1111-2222-3333\n", "bad.conf:2: bad account", "account: dashes");
    /* issue 37 break 15: a key set twice is refused naming both lines (inih would keep the
     * last silently); hex is refused (strtod reads 0x100 as 256); decimal only */
    expect_error("[bedtop]\ninterval = 60\nregion = us-east-1\ninterval = 30\n",
                 "bad.conf:4: 'interval' is set twice in [bedtop] (first on line 2); keep one",
                 "r4 break 15: a duplicate key names file:line of both");
    expect_error("[route a]\nmodel = x\n[route b]\nmodel = y\n[bedtop]\n[route a]\n",
                 "route 'a' defined twice", "a route written twice is still said as such");
    expect_error("[route a]\nmodel = x\nmax_tokens = 100\n  max_tokens : 200\n",
                 "bad.conf:4: 'max_tokens' is set twice in [route a] (first on line 3)",
                 "r4 break 15: ... in a route, with : and indentation");
    expect_error("[burndown]\nacme.* = 2\nacme.* = 3\n", "bad.conf:3: 'acme.*' is set twice in [burndown] (first on line 2)",
                 "r4 break 15: ... in [burndown]");
    expect_error("[route a]\nmodel = x\nmax_tokens = 0x100\n",
                 "bad.conf:3: bad number for max_tokens: '0x100'; use 1 to 10,000,000 in decimal (no hex)",
                 "r4 break 15: a hex number is refused, naming file:line");
    expect_error("[bedtop]\nwarn_headroom = 0x14%\n", "bad.conf:2: bad warn_headroom", "r4 break 15: a hex threshold too");
    expect_error("[route a]\nmodel = x\ncontext = 2m\n", "bad.conf:3: bad context '2m' (standard or 1m)",
                 "context: unknown variant");
    expect_error("[bedtop]\ndetail_interval = soon\n", "bad.conf:2: bad duration for detail_interval",
                 "detail_interval: not a duration");
}

/* The keys for quotas and routes as AWS names them today (issue 12, 15). */
static void test_route_keys(void)
{
    struct bt_config c;
    char err[512] = "";
    bt_config_init(&c);
    OK(c.detail_interval == 300, "detail_interval defaults to 5 minutes");
    bool ok = bt_config_parse_string(&c,
        "[bedtop]\naccount = 111122223333\ndetail_interval = 10m\n"
        "[route app]\nmodel = arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1\n"
        "base_model = anthropic.claude-sonnet-4-5-20250929-v1:0\ninference = cross-region\ncontext = 1m\n"
        "[route own]\nmodel = amazon.nova-pro-v1:0\naccount = 444455556666\n",
        "keys.conf", err, sizeof err);
    OK(ok, "base_model, context, account, detail_interval parse (%s)", err);
    OK(ok && c.detail_interval == 600, "detail_interval = 10m -> 600 s");
    OK(ok && !strcmp(c.routes[0].base_model, "anthropic.claude-sonnet-4-5-20250929-v1:0") &&
           !strcmp(c.routes[0].context, "1m"),
       "base_model and context kept");
    /* burndown from the base model (Claude 4.x: 5), not from the ARN (no table row: 1) */
    OK(ok && c.routes[0].burndown == 5 && !strcmp(c.routes[0].burndown_source, "table"),
       "burndown looked up with base_model");
    OK(ok && !strcmp(c.routes[0].account, "111122223333") && !strcmp(c.routes[1].account, "444455556666"),
       "[bedtop] account for routes that set none; a route's own wins");
    bt_config_free(&c);
}

static void test_long_line(void)
{
    /* a 400-character admission URL must survive (Debian's inih cuts at 200 by default) */
    char text[1024], url[512];
    memset(url, 'a', 400);
    url[400] = '\0';
    memcpy(url, "http://", 7);
    snprintf(text, sizeof text, "[route r]\nmodel = m\nadmission = %s\n", url);
    struct bt_config c;
    char err[512] = "";
    bt_config_init(&c);
    OK(bt_config_parse_string(&c, text, "long.conf", err, sizeof err) && !strcmp(c.routes[0].admission, url),
       "a 400-character value is kept whole (%s)", err);
    bt_config_free(&c);
}

/* Issue 26 break 2: inih's continuation lines made an indented key part of the value
 * above it ("model = x" then "    max_tokens = 500" gave the model "x\nmax_tokens = 500"
 * and no max_tokens); continuation is off, so an indented key is a key. */
static void test_indented_keys(void)
{
    struct bt_config c;
    char err[512] = "";
    bt_config_init(&c);
    bool ok = bt_config_parse_string(&c,
        "[route hot]\nmodel = anthropic.claude-3-haiku-20240307-v1:0\n    max_tokens = 500\n",
        "indent.conf", err, sizeof err);
    OK(ok && !strcmp(c.routes[0].model, "anthropic.claude-3-haiku-20240307-v1:0") &&
           c.routes[0].max_tokens == 500,
       "break 2: an indented key under model = is its own key, the model untouched (%s)", err);
    bt_config_free(&c);
    bt_config_init(&c);
    ok = bt_config_parse_string(&c,
        "[bedtop]\n  region = eu-west-1\n  interval = 120\n[route a]\n  model = m1\n  max_tokens = 700\n"
        "\t[route b]\n\tmodel = m2\n\tmax_tokens = 900\n",
        "indent.conf", err, sizeof err);
    OK(ok && !strcmp(c.region, "eu-west-1") && c.interval == 120 && c.nroutes == 2 &&
           !strcmp(c.routes[0].model, "m1") && c.routes[0].max_tokens == 700 &&
           !strcmp(c.routes[1].model, "m2") && c.routes[1].max_tokens == 900,
       "break 2: every key indented (spaces or tabs): every route whole (%s)", err);
    bt_config_free(&c);
    /* an indented line that is not key = value (a wrapped value) is an error on its line */
    expect_error("[route a]\nmodel = m1\n    and more of the model\n", "bad.conf:3:",
                 "break 2: an indented continuation is refused, naming its line");
}

/* Issue 26 break 7: text past inih's buffer was parsed as a new line, so a directive
 * hidden at the end of a long comment took effect. */
static void test_overlong_line(void)
{
    size_t n = 9000;
    char *text = malloc(n + 200);
    int off = snprintf(text, n + 200, "[route a]\nmodel = m1\n# ");
    memset(text + off, 'x', 8189 - 2);           /* the comment: "# " and 8,187 x = 8,189 */
    off += 8189 - 2;
    off += snprintf(text + off, n + 200 - (size_t)off, "max_tokens = 77\n");
    /* that line is 8,189 + 15 = 8,204 bytes: past 8,190 */
    expect_error(text, "bad.conf:3: line longer than 8190 bytes",
                 "break 7: a line longer than 8,190 bytes is an error naming file and line");
    /* 8,190 bytes exactly is kept whole: a comment of "# " and 8,188 x */
    off = snprintf(text, n + 200, "[route a]\nmodel = m1\n# ");
    memset(text + off, 'x', 8188);
    off += 8188;
    snprintf(text + off, n + 200 - (size_t)off, "\nmax_tokens = 66\n");
    struct bt_config c;
    char err[512] = "";
    bt_config_init(&c);
    bool ok = bt_config_parse_string(&c, text, "edge.conf", err, sizeof err);
    OK(ok && c.routes[0].max_tokens == 66, "break 7: a line of 8,190 bytes is read whole (%s)", err);
    bt_config_free(&c);
    free(text);
}

static void test_example_config(void)
{
    struct bt_config c;
    char err[512] = "", path[1024];
    snprintf(path, sizeof path, "%s/examples/bedtop.conf", tap_srcdir());
    bt_config_init(&c);
    OK(bt_config_load(&c, path, err, sizeof err) && c.nroutes == 5, "examples/bedtop.conf parses, 5 routes (%s)", err);
    bt_config_free(&c);
}

static void test_burndown_file(void)
{
    struct bt_burndown b = {0};
    char err[256] = "";
    OK(bt_burndown_parse(&b, "# table\n* = 1\nacme.* = 7   ; comment\n", "b.conf", err, sizeof err) &&
           b.n == 2 && b.rules[1].factor == 7,
       "burndown file: comments, inline comment, two rules (%s)", err);
    OK(!bt_burndown_parse(&b, "* = 1\nacme.* = lots\n", "b.conf", err, sizeof err) &&
           strstr(err, "b.conf:2: bad burndown row 'lots'"),
       "burndown file: bad factor names file:line (%s)", err);
    OK(!bt_burndown_parse(&b, "no equals here\n", "b.conf", err, sizeof err) &&
           strstr(err, "b.conf:1: expected 'model-pattern = factor'"),
       "burndown file: a line without = (%s)", err);
    bt_burndown_free(&b);
}

static void test_load_missing(void)
{
    struct bt_config c;
    char err[512] = "";
    bt_config_init(&c);
    OK(!bt_config_load(&c, "/nonexistent/bedtop.conf", err, sizeof err) &&
       strstr(err, "/nonexistent/bedtop.conf: No such file"), "missing explicit config is an error");
    bt_config_free(&c);
    bt_config_init(&c);
    OK(!bt_config_load(&c, "/", err, sizeof err) && strstr(err, "/: Is a directory"),
       "r4 break 15: a directory as the config: 'Is a directory' (%s)", err);
    bt_config_free(&c);
}

int main(void)
{
    test_design_example();
    test_errors();
    test_route_keys();
    test_load_missing();
    test_long_line();
    test_indented_keys();
    test_overlong_line();
    test_example_config();
    test_burndown_file();
    return tap_done();
}
