/* Service Quotas collector, pure parts: quota-name parsing, model-ID to
 * display-name matching over realistic pairs, per-route matching, and
 * ListServiceQuotas pagination with short and empty pages. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/infprofile.h"
#include "collectors/quotas.h"
#include "core/util.h"
#include "io/file.h"
#include "tests/tap.h"

#define ANY (-1)
/* Real quota names from Service Quotas (both naming families) and near misses. */
static void test_parse_name(const struct bt_quota_table *t)
{
    static const struct {
        const char *name;
        int n;                 /* readings: 0 none, 1 one */
        enum bt_quota_kind kind;
        int inf;
        const char *context, *model;
    } cases[] = {
        /* current names */
        {"On-demand InvokeModel tokens per minute for Anthropic Claude Sonnet 4.5 V1", 1, BT_Q_TPM,
         BT_INF_ON_DEMAND, "", "Anthropic Claude Sonnet 4.5 V1"},
        {"Cross-Region InvokeModel tokens per minute for Anthropic Claude Sonnet 4.5 V1", 1, BT_Q_TPM,
         BT_INF_CROSS_REGION, "", "Anthropic Claude Sonnet 4.5 V1"},
        {"Global Cross-Region InvokeModel tokens per minute for Anthropic Claude Opus 4.5", 1,
         BT_Q_TPM, BT_INF_GLOBAL, "", "Anthropic Claude Opus 4.5"},
        {"On-demand InvokeModel tokens per minute for Anthropic Claude 3 Sonnet", 1, BT_Q_TPM,
         BT_INF_ON_DEMAND, "", "Anthropic Claude 3 Sonnet"},
        {"Cross-Region InvokeModel tokens per minute for Meta Llama 3.3 70B Instruct", 1, BT_Q_TPM,
         BT_INF_CROSS_REGION, "", "Meta Llama 3.3 70B Instruct"},
        {"Model invocation max tokens per day for Anthropic Claude Sonnet 4.5 V1", 1, BT_Q_TPD, ANY,
         "", "Anthropic Claude Sonnet 4.5 V1"},
        {"Bedrock Mantle input tokens per minute for Anthropic Claude Opus 4.7", 1, BT_Q_INPUT_TPM,
         ANY, "", "Anthropic Claude Opus 4.7"},
        {"Bedrock Mantle output tokens per minute for OpenAI gpt-oss-120b", 1, BT_Q_OUTPUT_TPM, ANY,
         "", "OpenAI gpt-oss-120b"},
        /* context-length variants */
        {"Cross-Region InvokeModel tokens per minute for Anthropic Claude Sonnet 4 V1 1M Context Length",
         1, BT_Q_TPM, BT_INF_CROSS_REGION, "1m", "Anthropic Claude Sonnet 4 V1"},
        {"Global cross-region model inference tokens per minute for Anthropic Claude Sonnet 4.5 V1 1M "
         "Context Length",
         1, BT_Q_TPM, BT_INF_GLOBAL, "1m", "Anthropic Claude Sonnet 4.5 V1"},
        /* older names */
        {"On-demand model inference tokens per minute for Anthropic Claude Sonnet 4.5 V1", 1,
         BT_Q_TPM, BT_INF_ON_DEMAND, "", "Anthropic Claude Sonnet 4.5 V1"},
        {"Cross-region model inference tokens per minute for Anthropic Claude 3.7 Sonnet V1", 1,
         BT_Q_TPM, BT_INF_CROSS_REGION, "", "Anthropic Claude 3.7 Sonnet V1"},
        {"Global cross-region model inference tokens per minute for Anthropic Claude Sonnet 4.5 V1",
         1, BT_Q_TPM, BT_INF_GLOBAL, "", "Anthropic Claude Sonnet 4.5 V1"},
        {"Model invocation max tokens per day for Anthropic Claude Sonnet 4.5 V1 (doubled for "
         "cross-region calls)",
         1, BT_Q_TPD, ANY, "", "Anthropic Claude Sonnet 4.5 V1"},
        /* retired requests-per-minute rows: read, so they can be shown as not enforced */
        {"On-demand model inference requests per minute for Anthropic Claude 3 Haiku", 1, BT_Q_RPM,
         BT_INF_ON_DEMAND, "", "Anthropic Claude 3 Haiku"},
        {"Cross-Region model inference requests per minute for Meta Llama 3.1 70B Instruct", 1,
         BT_Q_RPM, BT_INF_CROSS_REGION, "", "Meta Llama 3.1 70B Instruct"},
        {"Cross-Region InvokeModel requests per minute for Anthropic Claude Sonnet 4.5 V1", 1,
         BT_Q_RPM, BT_INF_CROSS_REGION, "", "Anthropic Claude Sonnet 4.5 V1"},
        /* the families real accounts list (DOMAIN.md "Where quota values come from"), with
         * and without the vendor and "V1"; every one of these is matched_by "name" */
        {"On-demand model inference tokens per minute for Claude Opus 4.8", 1, BT_Q_TPM,
         BT_INF_ON_DEMAND, "", "Claude Opus 4.8"},
        {"Cross-region model inference tokens per minute for Anthropic Claude Sonnet 5 V1", 1,
         BT_Q_TPM, BT_INF_CROSS_REGION, "", "Anthropic Claude Sonnet 5 V1"},
        {"Global cross-region model inference tokens per minute for Claude Sonnet 4.6", 1, BT_Q_TPM,
         BT_INF_GLOBAL, "", "Claude Sonnet 4.6"},
        {"InvokeModel requests per minute for Anthropic Claude Sonnet 4.6", 1, BT_Q_RPM, ANY, "",
         "Anthropic Claude Sonnet 4.6"},
        {"Global cross-region model inference requests per minute for Claude Sonnet 4.6 V1", 1,
         BT_Q_RPM, BT_INF_GLOBAL, "", "Claude Sonnet 4.6 V1"},
        {"Model invocation max tokens per day for Claude Sonnet 4.5 V1 1M Context Length (doubled "
         "for cross-region calls)",
         1, BT_Q_TPD, ANY, "1m", "Claude Sonnet 4.5 V1"},
        {"Global cross-region model inference tokens per day for Anthropic Claude Opus 4.8", 1,
         BT_Q_TPD, BT_INF_GLOBAL, "", "Anthropic Claude Opus 4.8"},
        {"Cross-Model Max Tokens Per Day", 1, BT_Q_TPD_ACCOUNT, BT_QROW_ACCOUNT, "", ""},
        {"cross-model max tokens per day", 1, BT_Q_TPD_ACCOUNT, BT_QROW_ACCOUNT, "", ""},
        {"On-demand latency-optimized model inference tokens per minute for Anthropic Claude 3.5 "
         "Haiku",
         1, BT_Q_TPM, BT_INF_LATENCY_OPTIMIZED, "", "Anthropic Claude 3.5 Haiku"},
        {"Cross-region latency-optimized model inference tokens per minute for Meta Llama 3.1 70B "
         "Instruct",
         1, BT_Q_TPM, BT_INF_LATENCY_OPTIMIZED, "", "Meta Llama 3.1 70B Instruct"},
        {"Cross-Region InvokeModel concurrent requests for Anthropic Claude 3 Haiku", 1,
         BT_Q_CONCURRENT, BT_INF_CROSS_REGION, "", "Anthropic Claude 3 Haiku"},
        {"On-demand model inference concurrent requests for Luma Ray V2", 1, BT_Q_CONCURRENT,
         BT_INF_ON_DEMAND, "", "Luma Ray V2"},
        {"[bedrock-mantle endpoint] Input tokens per minute for GPT-5.6 Luna", 1, BT_Q_INPUT_TPM,
         ANY, "", "GPT-5.6 Luna"},
        {"[bedrock-mantle endpoint] Output tokens per minute for Claude Opus 4.8", 1,
         BT_Q_OUTPUT_TPM, ANY, "", "Claude Opus 4.8"},
        {"[Bedrock-Mantle Endpoint] input tokens per minute for Anthropic Claude Opus 4.7", 1,
         BT_Q_INPUT_TPM, ANY, "", "Anthropic Claude Opus 4.7"},
        {"Global Cross-Region InvokeModel tokens per minute for Claude Opus 4.8 1M Context Length",
         1, BT_Q_TPM, BT_INF_GLOBAL, "1m", "Claude Opus 4.8"},
        /* near misses: none of these is a route quota */
        {"Batch inference job size (in GB) for Claude 3 Haiku", 0, 0, 0, "", ""},
        {"Cross-Model Max Tokens Per Day for Anthropic Claude Opus 4.8", 0, 0, 0, "", ""},
        {"Cross-Model Max Tokens Per Minute", 0, 0, 0, "", ""},
        {"[bedrock-mantle endpoint] Requests per minute for GPT-5.6 Luna", 0, 0, 0, "", ""},
        {"[bedrock-mantle endpoint] Input tokens per day for GPT-5.6 Luna", 0, 0, 0, "", ""},
        {"[bedrock-mantle endpoint] Input tokens per minute for ", 0, 0, 0, "", ""},
        {"On-demand model inference tokens per hour for Claude Opus 4.8", 0, 0, 0, "", ""},
        {"Provisioned model units for Anthropic Claude Opus 4.8", 0, 0, 0, "", ""},
        {"Cross-region model inference tokens per minute for ", 0, 0, 0, "", ""},
        {"Custom models per account", 0, 0, 0, "", ""},
        {"On-demand InvokeModel tokens per second for Anthropic Claude 3 Haiku", 0, 0, 0, "", ""},
        {"Bedrock Mantle requests per minute for Anthropic Claude Opus 4.7", 0, 0, 0, "", ""},
        {"Provisioned model inference tokens per minute for Anthropic Claude 3 Haiku", 0, 0, 0, "", ""},
        {"Model invocation max tokens per day for", 0, 0, 0, "", ""},
        {"Sum of in-progress and submitted batch inference jobs using a base model for Claude", 0, 0,
         0, "", ""},
    };
    for (size_t i = 0; i < BT_ARRAY_LEN(cases); i++) {
        struct bt_qname q[2];
        memset(q, 0, sizeof q);
        int n = bt_quotas_parse_name(t, cases[i].name, q);
        bool good = n == cases[i].n;
        if (good && n == 1)
            good = q[0].kind == cases[i].kind && q[0].inference == cases[i].inf &&
                   strcmp(q[0].context, cases[i].context) == 0 &&
                   strcmp(q[0].model, cases[i].model) == 0;
        OK(good, "quota name %zu: %.70s -> %s%s%s (got %d: %s %s)", i, cases[i].name,
           cases[i].n ? cases[i].model : "(not a route quota)", cases[i].context[0] ? " context " : "",
           cases[i].context, n, n ? bt_quota_kind_name(q[0].kind) : "-", n ? q[0].model : "");
    }
}

/* Two rows of equal weight that read a name differently: reported, never guessed. */
static void test_ambiguous_rows(void)
{
    struct bt_quota_table t = {0};
    char err[256] = "";
    bool ok = bt_quota_table_parse(&t,
                                   "Tokens per minute for {model} = tpm on-demand\n"
                                   "tokens-per-minute for {model} = tpm cross-region\n"
                                   "Tokens per minute for {model} 1M Context Length = tpm on-demand context=1m\n",
                                   "t", err, sizeof err);
    OK(ok && t.nrows == 3, "a table with two rows of the same weight parses (%s)", err);
    struct bt_qname q[2];
    memset(q, 0, sizeof q);
    int n = bt_quotas_parse_name(&t, "Tokens per minute for Amazon Nova Pro", q);
    OK(n == 2 && q[0].line == 1 && q[1].line == 2,
       "a name two rows read differently is ambiguous (lines %d and %d)", q[0].line, q[1].line);
    n = bt_quotas_parse_name(&t, "Tokens per minute for Amazon Nova Pro 1M Context Length", q);
    OK(n == 1 && !strcmp(q[0].context, "1m") && !strcmp(q[0].model, "Amazon Nova Pro"),
       "the longer row wins over the shorter ones");
    struct bt_sq_list l = {0};
    l.q = bt_xcalloc(1, sizeof *l.q);
    l.n = l.cap = 1;
    bt_strlcpy(l.q[0].code, "L-AMB", sizeof l.q[0].code);
    bt_strlcpy(l.q[0].name, "Tokens per minute for Amazon Nova Pro", sizeof l.q[0].name);
    l.q[0].value = 1000;
    struct bt_route r;
    memset(&r, 0, sizeof r);
    bt_strlcpy(r.model, "amazon.nova-pro-v1:0", sizeof r.model);
    char why[224] = "";
    OK(bt_quotas_match(&r, BT_Q_TPM, &l, &t, why, sizeof why) == -2 && strstr(why, "L-AMB") &&
           strstr(why, "lines 1 and 2"),
       "the route's quota is reported ambiguous: %s", why);
    bt_sq_list_free(&l);
    bt_quota_table_free(&t);
    static const char *const bad[] = {
        "Tokens for {model} = tpm\n", "Tokens for {model} = tpx on-demand\n",
        "Tokens for {model} = tpm sideways\n", "Tokens for {model} {model} = tpm any\n",
        "Tokens for {model} = tpm any context=\n", "Tokens for {model} = tpm any extra\n",
    };
    for (size_t i = 0; i < BT_ARRAY_LEN(bad); i++) {
        ok = bt_quota_table_parse(&t, bad[i], "t", err, sizeof err);
        OK(!ok && !strncmp(err, "t:1: ", 5), "bad row %zu rejected with file:line (%s)", i, err);
        bt_quota_table_free(&t);
    }
}

static void test_model_matches(struct bt_quota_table *hints)
{
    static const struct {
        const char *id, *display;
        bool want;
    } cases[] = {
        {"us.anthropic.claude-sonnet-4-5-20250929-v1:0", "Anthropic Claude Sonnet 4.5 V1", true},
        {"anthropic.claude-sonnet-4-5-20250929-v1:0", "Anthropic Claude Sonnet 4.5", true},
        {"global.anthropic.claude-sonnet-4-5-20250929-v1:0", "Anthropic Claude Sonnet 4 V1", false},
        {"anthropic.claude-sonnet-4-20250514-v1:0", "Anthropic Claude Sonnet 4 V1", true},
        {"anthropic.claude-sonnet-4-20250514-v1:0", "Anthropic Claude Sonnet 4.5 V1", false},
        {"anthropic.claude-3-5-sonnet-20241022-v2:0", "Anthropic Claude 3.5 Sonnet V2", true},
        {"anthropic.claude-3-5-sonnet-20241022-v2:0", "Anthropic Claude 3.5 Sonnet", false},
        {"anthropic.claude-3-5-sonnet-20240620-v1:0", "Anthropic Claude 3.5 Sonnet", true},
        {"anthropic.claude-3-5-sonnet-20240620-v1:0", "Anthropic Claude 3.5 Sonnet V2", false},
        {"anthropic.claude-3-sonnet-20240229-v1:0", "Anthropic Claude 3.5 Sonnet", false},
        {"anthropic.claude-3-haiku-20240307-v1:0", "Anthropic Claude 3 Haiku", true},
        {"anthropic.claude-3-haiku-20240307-v1:0", "Anthropic Claude 3.5 Haiku", false},
        {"us.anthropic.claude-3-7-sonnet-20250219-v1:0", "Anthropic Claude 3.7 Sonnet V1", true},
        {"anthropic.claude-opus-4-1-20250805-v1:0", "Anthropic Claude Opus 4.1", true},
        {"anthropic.claude-opus-4-1-20250805-v1:0", "Anthropic Claude Opus 4", false},
        {"anthropic.claude-haiku-4-5-20251001-v1:0", "Anthropic Claude Haiku 4.5", true},
        {"meta.llama3-1-70b-instruct-v1:0", "Meta Llama 3.1 70B Instruct", true},
        {"meta.llama3-1-8b-instruct-v1:0", "Meta Llama 3.1 70B Instruct", false},
        {"us.meta.llama3-2-90b-instruct-v1:0", "Meta Llama 3.2 90B Instruct", true},
        {"us.meta.llama3-2-11b-instruct-v1:0", "Meta Llama 3.2 1B Instruct", false},
        {"amazon.nova-pro-v1:0", "Amazon Nova Pro", true},
        {"us.amazon.nova-lite-v1:0", "Amazon Nova Pro", false},
        {"amazon.nova-pro-v1:0", "Amazon Nova Premier", false},
        {"mistral.mistral-large-2407-v1:0", "Mistral Large (24.07)", true},
        {"mistral.mistral-large-2402-v1:0", "Mistral Large (24.07)", false},
        {"cohere.command-r-plus-v1:0", "Cohere Command R+", true},
        {"cohere.command-r-v1:0", "Cohere Command R+", false},
        {"deepseek.r1-v1:0", "DeepSeek R1", true},
        {"ai21.jamba-1-5-large-v1:0", "AI21 Labs Jamba 1.5 Large", true},
        {"ai21.jamba-1-5-mini-v1:0", "AI21 Labs Jamba 1.5 Large", false},
        /* names as today's quota list spells them */
        {"anthropic.claude-opus-4-5-20251101-v1:0", "Anthropic Claude Opus 4.5", true},
        {"global.anthropic.claude-opus-4-5-20251101-v1:0", "Anthropic Claude Opus 4.1", false},
        {"us.meta.llama4-maverick-17b-instruct-v1:0", "Meta Llama 4 Maverick 17B Instruct", true},
        {"us.meta.llama4-scout-17b-instruct-v1:0", "Meta Llama 4 Maverick 17B Instruct", false},
        {"amazon.nova-premier-v1:0", "Amazon Nova Premier", true},
        {"mistral.pixtral-large-2502-v1:0", "Mistral Pixtral Large 25.02", true},
        {"anthropic.claude-opus-4-7", "Anthropic Claude Opus 4.7", true},
        {"anthropic.claude-opus-4-7", "Anthropic Claude Opus 4", false},
        /* ID with no "-vN": needs the hint from data/quota-names.conf */
        {"openai.gpt-oss-120b-1:0", "OpenAI gpt-oss-120b", true},
        {"openai.gpt-oss-20b-1:0", "OpenAI gpt-oss-120b", false},
        /* a model ID that is not a model at all never matches */
        {"", "Anthropic Claude 3 Haiku", false},
        {"arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc",
         "Anthropic Claude 3 Haiku", false},
    };
    for (size_t i = 0; i < BT_ARRAY_LEN(cases); i++) {
        bool got = bt_quotas_model_matches(cases[i].id, cases[i].display, hints);
        OK(got == cases[i].want, "%s %s \"%s\"", cases[i].id,
           cases[i].want ? "matches" : "does not match", cases[i].display);
    }
    /* a hint replaces the derived comparison for the IDs it covers */
    struct bt_quota_table h = {0};
    char err[256] = "";
    bool ok = bt_quota_table_parse(&h, "# test\nanthropic.claude-3-haiku* = Claude Haiku Three\n",
                                   "hints", err, sizeof err);
    OK(ok && h.n == 1, "hint text parses");
    OK(bt_quotas_model_matches("us.anthropic.claude-3-haiku-20240307-v1:0", "Claude Haiku Three",
                               &h),
       "hint: the hinted display name matches");
    OK(!bt_quotas_model_matches("anthropic.claude-3-haiku-20240307-v1:0",
                                "Anthropic Claude 3 Haiku", &h),
       "hint: replaces the derived match for its IDs");
    bt_quota_table_free(&h);
    OK(!bt_quota_table_parse(&h, "no equals sign here\n", "hints", err, sizeof err) &&
           strncmp(err, "hints:1: expected ", 18) == 0,
       "hint file error names file:line (%s)", err);
    bt_quota_table_free(&h);
}

static void add_quota(struct bt_sq_list *l, const char *code, const char *name, double v)
{
    l->q = bt_xrealloc(l->q, (size_t)(l->n + 1) * sizeof *l->q);
    memset(&l->q[l->n], 0, sizeof l->q[l->n]);
    bt_strlcpy(l->q[l->n].code, code, sizeof l->q[l->n].code);
    bt_strlcpy(l->q[l->n].name, name, sizeof l->q[l->n].name);
    l->q[l->n].value = v;
    l->n++;
    l->cap = l->n;
}

static void route(struct bt_route *r, const char *model)
{
    memset(r, 0, sizeof *r);
    bt_strlcpy(r->model, model, sizeof r->model);
    r->inference = bt_inference_from_model(model);
}

static int match(const struct bt_route *r, enum bt_quota_kind k, const struct bt_sq_list *l,
                 const struct bt_quota_table *t)
{
    char why[224];
    return bt_quotas_match(r, k, l, t, why, sizeof why);
}

static void test_route_match(struct bt_quota_table *hints)
{
    struct bt_sq_list l = {0};
    add_quota(&l, "L-OD45", "On-demand model inference tokens per minute for Anthropic Claude Sonnet 4.5 V1", 200000);
    add_quota(&l, "L-CR45", "Cross-region model inference tokens per minute for Anthropic Claude Sonnet 4.5 V1", 2000000);
    add_quota(&l, "L-GL45", "Global cross-region model inference tokens per minute for Anthropic Claude Sonnet 4.5 V1", 4000000);
    add_quota(&l, "L-CR4", "Cross-region model inference tokens per minute for Anthropic Claude Sonnet 4 V1", 1000000);
    add_quota(&l, "L-RPM45", "Cross-region model inference requests per minute for Anthropic Claude Sonnet 4.5 V1", 2000);
    add_quota(&l, "L-TPD45", "Model invocation max tokens per day for Anthropic Claude Sonnet 4.5 V1 (doubled for cross-region calls)", 144000000);
    add_quota(&l, "L-H3A", "On-demand model inference tokens per minute for Anthropic Claude 3 Haiku", 300000);
    add_quota(&l, "L-H3B", "On-demand model inference tokens per minute for Anthropic Claude 3 Haiku V1", 400000);
    add_quota(&l, "L-NOVA", "On-demand InvokeModel tokens per minute for Amazon Nova Pro", 500000);
    add_quota(&l, "L-CR4M", "Cross-Region InvokeModel tokens per minute for Anthropic Claude Sonnet 4 V1 1M Context Length", 500000);
    add_quota(&l, "L-MIN", "Bedrock Mantle input tokens per minute for Anthropic Claude Opus 4.7", 20000000);
    add_quota(&l, "L-MOUT", "Bedrock Mantle output tokens per minute for Anthropic Claude Opus 4.7", 4000000);
    add_quota(&l, "L-OPCR", "Cross-Region InvokeModel tokens per minute for Anthropic Claude Opus 4.7", 3000000);

    struct bt_route od, cr, gl, h3, s4, nova;
    route(&od, "anthropic.claude-sonnet-4-5-20250929-v1:0");
    route(&cr, "us.anthropic.claude-sonnet-4-5-20250929-v1:0");
    route(&gl, "global.anthropic.claude-sonnet-4-5-20250929-v1:0");
    route(&h3, "anthropic.claude-3-haiku-20240307-v1:0");
    route(&s4, "eu.anthropic.claude-sonnet-4-20250514-v1:0");
    route(&nova, "amazon.nova-pro-v1:0");
    OK(match(&od, BT_Q_TPM, &l, hints) == 0, "on-demand Sonnet 4.5 -> on-demand TPM");
    OK(match(&cr, BT_Q_TPM, &l, hints) == 1, "us. Sonnet 4.5 -> cross-region TPM");
    OK(match(&gl, BT_Q_TPM, &l, hints) == 2, "global. Sonnet 4.5 -> global TPM");
    OK(match(&s4, BT_Q_TPM, &l, hints) == 3,
       "eu. Sonnet 4 -> its standard TPM, not 4.5's and not the 1M-context one");
    s4.context[0] = '1', s4.context[1] = 'm';
    OK(match(&s4, BT_Q_TPM, &l, hints) == 9, "eu. Sonnet 4 with context = 1m -> the 1M-context TPM");
    OK(match(&cr, BT_Q_RPM, &l, hints) == 4, "us. Sonnet 4.5 -> cross-region RPM (read, not enforced)");
    OK(match(&od, BT_Q_RPM, &l, hints) == -1, "on-demand Sonnet 4.5: no RPM quota");
    OK(match(&gl, BT_Q_TPD, &l, hints) == 5 && match(&od, BT_Q_TPD, &l, hints) == 5,
       "the daily quota applies to every inference route");
    /* 144,000,000 per day, doubled for cross-region calls: 288,000,000 */
    NEAR(bt_quotas_effective_value(&cr, BT_Q_TPD, &l.q[5]), 288000000, 0, "TPD doubled for us.");
    NEAR(bt_quotas_effective_value(&od, BT_Q_TPD, &l.q[5]), 144000000, 0, "TPD as is on-demand");
    NEAR(bt_quotas_effective_value(&cr, BT_Q_TPM, &l.q[1]), 2000000, 0, "TPM never doubled");
    char why[224] = "";
    OK(bt_quotas_match(&h3, BT_Q_TPM, &l, hints, why, sizeof why) == -2 && strstr(why, "L-H3A") &&
           strstr(why, "L-H3B"),
       "two different values name the same model: reported (%s), not guessed", why);
    OK(match(&nova, BT_Q_TPM, &l, hints) == 8, "Amazon Nova Pro by its current name");
    bt_strlcpy(cr.quota_code, "L-GL45", sizeof cr.quota_code);
    OK(match(&cr, BT_Q_TPM, &l, hints) == 2, "quota_code wins over the name");
    bt_strlcpy(cr.quota_code, "L-MISSING", sizeof cr.quota_code);
    OK(match(&cr, BT_Q_TPM, &l, hints) == -1, "absent quota_code: unknown, no name fallback");

    struct bt_route mantle;
    route(&mantle, "anthropic.claude-opus-4-7");
    mantle.endpoint = BT_EP_MANTLE;
    OK(match(&mantle, BT_Q_INPUT_TPM, &l, hints) == 10, "mantle input quota from Service Quotas");
    OK(match(&mantle, BT_Q_OUTPUT_TPM, &l, hints) == 11, "mantle output quota from Service Quotas");
    OK(match(&mantle, BT_Q_TPM, &l, hints) == -1, "a mantle route never takes a runtime TPM quota");
    struct bt_route opus;
    route(&opus, "us.anthropic.claude-opus-4-7");
    OK(match(&opus, BT_Q_TPM, &l, hints) == 12 && match(&opus, BT_Q_INPUT_TPM, &l, hints) == -1,
       "a runtime route never takes a mantle quota");

    /* an application inference profile: matched by its base model once resolved */
    struct bt_route app;
    route(&app, "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5f6");
    OK(match(&app, BT_Q_TPM, &l, hints) == -1, "an unresolved profile ARN matches nothing");
    bt_strlcpy(app.base_model, "anthropic.claude-sonnet-4-5-20250929-v1:0", sizeof app.base_model);
    app.inference = BT_INF_CROSS_REGION;
    OK(match(&app, BT_Q_TPM, &l, hints) == 1, "resolved profile -> the cross-region quota of its model");
    bt_sq_list_free(&l);
}

static void test_infprofile(void)
{
    const char *arn = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5f6";
    OK(bt_infprofile_is_arn(arn), "application-profile ARN recognised");
    OK(!bt_infprofile_is_arn("us.anthropic.claude-sonnet-4-5-20250929-v1:0") &&
           !bt_infprofile_is_arn("arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/") &&
           !bt_infprofile_is_arn("arn:aws:s3:::bucket/application-inference-profile/x"),
       "model IDs, empty IDs and other services' ARNs are not profiles");
    char path[512], region[32];
    bt_infprofile_path(arn, path, sizeof path);
    STREQ(path,
          "/inference-profiles/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Aapplication-inference-profile%2Fa1b2c3d4e5f6",
          "GetInferenceProfile path: the ARN URL-encoded");
    bt_infprofile_arn_region(arn, region, sizeof region);
    STREQ(region, "us-east-1", "Region from the ARN");
    /* the answer's shape: AWS Bedrock API reference, GetInferenceProfile */
    const char *cross =
        "{\"inferenceProfileName\":\"triage-app\",\"description\":\"d\",\"createdAt\":\"2026-01-02T03:04:05Z\","
        "\"updatedAt\":\"2026-01-02T03:04:05Z\",\"inferenceProfileArn\":\"x\",\"inferenceProfileId\":\"a1b2c3d4e5f6\","
        "\"status\":\"ACTIVE\",\"type\":\"APPLICATION\",\"models\":["
        "{\"modelArn\":\"arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-sonnet-4-5-20250929-v1:0\"},"
        "{\"modelArn\":\"arn:aws:bedrock:us-east-2::foundation-model/anthropic.claude-sonnet-4-5-20250929-v1:0\"},"
        "{\"modelArn\":\"arn:aws:bedrock:us-west-2::foundation-model/anthropic.claude-sonnet-4-5-20250929-v1:0\"}]}";
    struct bt_infprofile ip;
    char err[160] = "";
    OK(bt_infprofile_parse(cross, strlen(cross), &ip, err, sizeof err) &&
           !strcmp(ip.base_model, "anthropic.claude-sonnet-4-5-20250929-v1:0") &&
           ip.inference == BT_INF_CROSS_REGION && ip.nregions == 3 && !strcmp(ip.type, "APPLICATION"),
       "three Regions: cross-region, base model from the model ARN (%s)", err);
    const char *one = "{\"models\":[{\"modelArn\":\"arn:aws:bedrock:eu-west-1::foundation-model/amazon.nova-pro-v1:0\"}]}";
    OK(bt_infprofile_parse(one, strlen(one), &ip, err, sizeof err) &&
           !strcmp(ip.base_model, "amazon.nova-pro-v1:0") && ip.inference == BT_INF_ON_DEMAND,
       "one Region: on-demand");
    static const char *const bad[] = {
        "{\"models\":[]}", "{\"models\":5}", "{}", "[1]", "{\"models\":[{\"modelArn\":\"nova\"}]}",
        "{\"models\":[{\"modelArn\":\"arn:aws:bedrock:us-east-1::foundation-model/a\"},"
        "{\"modelArn\":\"arn:aws:bedrock:us-east-1::foundation-model/b\"}]}",
    };
    for (size_t i = 0; i < BT_ARRAY_LEN(bad); i++)
        OK(!bt_infprofile_parse(bad[i], strlen(bad[i]), &ip, err, sizeof err) && !ip.base_model[0],
           "bad answer %zu rejected: %s", i, err);
}

/* A resolved profile travels as typed setting events (base model, inference,
 * burndown with its source), applied by the model live and in replay; a 1.x
 * recording's BASE_MODEL info event, whose prose carried the same, still applies. */
static void test_base_model_event(void)
{
    struct bt_route routes[1], base[1];
    bt_route_defaults(&routes[0]);
    bt_strlcpy(routes[0].model, "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1",
               sizeof routes[0].model);
    routes[0].burndown = 1;
    routes[0].burndown_source = "default";
    base[0] = routes[0];
    struct bt_store st;
    bt_store_init(&st, 1, 60);
    bt_store_track_arrival(&st);
    bt_store_bind_routes(&st, routes);
    struct bt_event ev = {.t = 1000, .type = BT_EV_SETTING, .route = 0, .source = BT_SRC_QUOTAS,
                          .setting = BT_SET_BASE_MODEL};
    bt_strlcpy(ev.str, "anthropic.claude-sonnet-4-5-20250929-v1:0", sizeof ev.str);
    bt_store_apply(&st, &ev);
    ev.setting = BT_SET_INFERENCE;
    bt_strlcpy(ev.str, "cross-region", sizeof ev.str);
    bt_store_apply(&st, &ev);
    ev.setting = BT_SET_BURNDOWN;
    ev.value = 5;
    bt_strlcpy(ev.str, "table", sizeof ev.str);
    bt_store_apply(&st, &ev);
    OK(!strcmp(routes[0].base_model, "anthropic.claude-sonnet-4-5-20250929-v1:0") &&
           routes[0].inference == BT_INF_CROSS_REGION && routes[0].burndown == 5 &&
           !strcmp(routes[0].burndown_source, "table"),
       "the events set base model, inference, burndown and its source");
    bt_store_set_horizon(&st, routes, base, 999);
    OK(!routes[0].base_model[0] && routes[0].inference == BT_INF_ON_DEMAND && routes[0].burndown == 1 &&
           !strcmp(routes[0].burndown_source, "default"),
       "replay before the events: the header's route");
    bt_store_set_horizon(&st, routes, base, 1000);
    OK(routes[0].burndown == 5 && routes[0].base_model[0], "replay from the events on: resolved");
    struct bt_event bad = ev;
    bad.value = NAN;
    bt_store_apply(&st, &bad);
    bad.value = 1e9;
    bt_store_apply(&st, &bad);
    OK(routes[0].burndown == 5, "a burndown that is not a number, or beyond 1000, changes nothing");
    bt_store_free(&st);

    /* a 1.x recording: the prose of its BASE_MODEL info event */
    routes[0] = base[0];
    bt_store_init(&st, 1, 60);
    struct bt_event old = {.t = 1000, .type = BT_EV_INFO, .route = 0, .source = BT_SRC_QUOTAS};
    bt_strlcpy(old.code, BT_EVCODE_BASE_MODEL, sizeof old.code);
    bt_strlcpy(old.text, "base model anthropic.claude-sonnet-4-5-20250929-v1:0, cross-region, "
                         "burndown 5 (GetInferenceProfile)", sizeof old.text);
    bt_model_event(&st, routes, &old);
    OK(!strcmp(routes[0].base_model, "anthropic.claude-sonnet-4-5-20250929-v1:0") &&
           routes[0].inference == BT_INF_CROSS_REGION && routes[0].burndown == 5,
       "a 1.x BASE_MODEL event still sets base model, inference and burndown");
    bt_strlcpy(old.text, "base model x, cross-region, burndown NaN", sizeof old.text);
    bt_model_event(&st, routes, &old);
    OK(routes[0].burndown == 5, "a malformed 1.x text changes nothing");
    bt_store_free(&st);
}

static void test_pages(void)
{
    struct bt_buf b = {0};
    bt_quotas_request_json(&b, NULL);
    STREQ(bt_buf_str(&b), "{\"ServiceCode\":\"bedrock\",\"MaxResults\":100}", "request, page 1");
    bt_quotas_request_json(&b, "t2");
    STREQ(bt_buf_str(&b), "{\"ServiceCode\":\"bedrock\",\"MaxResults\":100,\"NextToken\":\"t2\"}",
          "request, page 2");
    bt_buf_free(&b);

#define Q(code, v) "{\"ServiceCode\":\"bedrock\",\"QuotaCode\":\"" code "\",\"QuotaName\":\"On-demand model inference tokens per minute for Q " code "\",\"Value\":" #v ",\"Unit\":\"None\"}"
    /* short, empty, short, last: 3 + 0 + 1 + 2 = 6 quotas, one skipped (no Value) */
    const char *pages[] = {
        "{\"Quotas\":[" Q("L-1", 1) "," Q("L-2", 2) "," Q("L-3", 3) "],\"NextToken\":\"a\"}",
        "{\"Quotas\":[],\"NextToken\":\"b\"}",
        "{\"Quotas\":[{\"QuotaCode\":\"L-X\",\"QuotaName\":\"broken\",\"ErrorReason\":{}}," Q("L-4", 4e6) "],\"NextToken\":\"c\"}",
        "{\"Quotas\":[" Q("L-5", 5) "," Q("L-6", 6.5) "]}",
    };
#undef Q
    const char *want_tok[] = {"a", "b", "c", NULL};
    struct bt_sq_list l = {0};
    char err[256] = "";
    for (size_t i = 0; i < BT_ARRAY_LEN(pages); i++) {
        char *tok = NULL;
        bool ok = bt_quotas_parse_page(pages[i], strlen(pages[i]), &l, &tok, err, sizeof err);
        bool good = ok && ((!tok && !want_tok[i]) || (tok && want_tok[i] && !strcmp(tok, want_tok[i])));
        OK(good, "page %zu parses, NextToken %s", i + 1, want_tok[i] ? want_tok[i] : "(none)");
        free(tok);
    }
    OK(l.n == 6, "6 quotas over 4 pages (an empty page with a token in between), got %d", l.n);
    OK(l.n == 6 && strcmp(l.q[3].code, "L-4") == 0 && l.q[3].value == 4e6 && l.q[5].value == 6.5,
       "values and codes kept in order");
    char *tok = NULL;
    OK(!bt_quotas_parse_page("{\"Quotas\":[", 11, &l, &tok, err, sizeof err) && tok == NULL,
       "truncated page rejected: %s", err);
    OK(!bt_quotas_parse_page("{\"Quotas\":5}", 12, &l, &tok, err, sizeof err), "wrong shape rejected");
    OK(l.n == 6, "rejected pages add nothing");
    bt_sq_list_free(&l);
}

/* The one inference-profile prefix list (core/model.c) as the readers see it. */
static void test_profile_prefixes(void)
{
    OK(bt_profile_prefix_len("us.anthropic.claude-sonnet-4-20250514-v1:0") == 3, "us. is a profile prefix");
    OK(bt_profile_prefix_len("us-gov.anthropic.claude-3-haiku-20240307-v1:0") == 7, "us-gov. is one (not us.)");
    OK(bt_profile_prefix_len("global.anthropic.claude-sonnet-4-5-20250929-v1:0") == 7, "global. is one");
    OK(bt_profile_prefix_len("anthropic.claude-3-haiku-20240307-v1:0") == 0, "a bare model ID has none");
    OK(bt_profile_prefix_len("usa.model") == 0 && bt_profile_prefix_len("") == 0, "us without the dot is not one");
    OK(bt_inference_from_model("global.x") == BT_INF_GLOBAL && bt_inference_from_model("apac.amazon.nova-pro-v1:0") == BT_INF_CROSS_REGION &&
           bt_inference_from_model("meta.llama3") == BT_INF_ON_DEMAND,
       "inference type from the same pattern");
    struct bt_burndown b = {0};
    bt_burndown_add(&b, "anthropic.claude-3-7*", 5, -1, "test");
    bool matched = false;
    OK(bt_burndown_lookup(&b, "us-gov.anthropic.claude-3-7-sonnet-20250219-v1:0", &matched) == 5 && matched,
       "burndown: a rule for the bare ID matches behind the us-gov. prefix");
    bt_burndown_free(&b);
}

int main(void)
{
    struct bt_quota_table hints = {0};
    char err[512] = "";
    char path[4200];
    /* the shipped data file, from the source tree */
    snprintf(path, sizeof path, "%s/data/quota-names.conf", tap_srcdir());
    char *text = bt_read_file(path, 1 << 20, NULL);
    OK(text != NULL, "data/quota-names.conf readable");
    OK(text && bt_quota_table_parse(&hints, text, path, err, sizeof err) && hints.n > 0 &&
           hints.nrows >= 20,
       "data/quota-names.conf parses (%s)", err);
    free(text);
    test_parse_name(&hints);
    test_ambiguous_rows();
    test_model_matches(&hints);
    test_route_match(&hints);
    test_infprofile();
    test_base_model_event();
    test_pages();
    test_profile_prefixes();
    bt_quota_table_free(&hints);
    return tap_done();
}
