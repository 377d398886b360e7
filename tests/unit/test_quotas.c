/* Service Quotas collector, pure parts: quota-name parsing, model-ID to
 * display-name matching over realistic pairs, per-route matching, and
 * ListServiceQuotas pagination with short and empty pages. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/quotas.h"
#include "core/util.h"
#include "tests/tap.h"

static void test_parse_name(void)
{
    static const struct {
        const char *name;
        bool ok;
        enum bt_quota_kind kind;
        enum bt_inference inf;
        bool any;
        const char *model;
    } cases[] = {
        {"On-demand model inference tokens per minute for Anthropic Claude Sonnet 4.5 V1", true,
         BT_Q_TPM, BT_INF_ON_DEMAND, false, "Anthropic Claude Sonnet 4.5 V1"},
        {"Cross-region model inference tokens per minute for Anthropic Claude 3.7 Sonnet V1", true,
         BT_Q_TPM, BT_INF_CROSS_REGION, false, "Anthropic Claude 3.7 Sonnet V1"},
        {"Global cross-region model inference tokens per minute for Anthropic Claude Sonnet 4.5 V1",
         true, BT_Q_TPM, BT_INF_GLOBAL, false, "Anthropic Claude Sonnet 4.5 V1"},
        {"On-demand model inference requests per minute for Anthropic Claude 3 Haiku", true,
         BT_Q_RPM, BT_INF_ON_DEMAND, false, "Anthropic Claude 3 Haiku"},
        {"Cross-Region model inference requests per minute for Meta Llama 3.1 70B Instruct", true,
         BT_Q_RPM, BT_INF_CROSS_REGION, false, "Meta Llama 3.1 70B Instruct"},
        {"Model invocation max tokens per day for Anthropic Claude Sonnet 4.5 V1 (doubled for "
         "cross-region calls)",
         true, BT_Q_TPD, BT_INF_ON_DEMAND, true, "Anthropic Claude Sonnet 4.5 V1"},
        {"On-demand InvokeModel tokens per minute for Anthropic Claude 3 Sonnet", true, BT_Q_TPM,
         BT_INF_ON_DEMAND, false, "Anthropic Claude 3 Sonnet"},
        {"Batch inference job size (in GB) for Claude 3 Haiku", false, 0, 0, false, ""},
        {"On-demand latency-optimized model inference tokens per minute for Anthropic Claude 3.5 "
         "Haiku",
         false, 0, 0, false, ""},
        {"Cross-region model inference tokens per minute for ", false, 0, 0, false, ""},
        {"Custom models per account", false, 0, 0, false, ""},
    };
    for (size_t i = 0; i < BT_ARRAY_LEN(cases); i++) {
        enum bt_quota_kind k = BT_Q_COUNT;
        enum bt_inference inf = BT_INF_GLOBAL;
        bool any = false;
        char model[256] = "";
        bool ok = bt_quotas_parse_name(cases[i].name, &k, &inf, &any, model, sizeof model);
        bool good = ok == cases[i].ok;
        if (good && ok)
            good = k == cases[i].kind && inf == cases[i].inf && any == cases[i].any &&
                   strcmp(model, cases[i].model) == 0;
        OK(good, "quota name %zu: %.60s -> %s", i, cases[i].name,
           cases[i].ok ? cases[i].model : "(not a route quota)");
    }
}

static void test_model_matches(struct bt_quota_hints *hints)
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
    struct bt_quota_hints h = {0};
    char err[256] = "";
    bool ok = bt_quota_hints_parse(&h, "# test\nanthropic.claude-3-haiku* = Claude Haiku Three\n",
                                   "hints", err, sizeof err);
    OK(ok && h.n == 1, "hint text parses");
    OK(bt_quotas_model_matches("us.anthropic.claude-3-haiku-20240307-v1:0", "Claude Haiku Three",
                               &h),
       "hint: the hinted display name matches");
    OK(!bt_quotas_model_matches("anthropic.claude-3-haiku-20240307-v1:0",
                                "Anthropic Claude 3 Haiku", &h),
       "hint: replaces the derived match for its IDs");
    bt_quota_hints_free(&h);
    OK(!bt_quota_hints_parse(&h, "no equals sign here\n", "hints", err, sizeof err) &&
           strcmp(err, "hints:1: expected 'model-pattern = quota display name'") == 0,
       "hint file error names file:line (%s)", err);
    bt_quota_hints_free(&h);
}

static void add_quota(struct bt_sq_list *l, const char *code, const char *name, double v)
{
    l->q = bt_xrealloc(l->q, (size_t)(l->n + 1) * sizeof *l->q);
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

static void test_route_match(struct bt_quota_hints *hints)
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
    add_quota(&l, "L-NOVA", "On-demand model inference tokens per minute for Amazon Nova Pro", 500000);

    struct bt_route od, cr, gl, h3, s4, nova;
    route(&od, "anthropic.claude-sonnet-4-5-20250929-v1:0");
    route(&cr, "us.anthropic.claude-sonnet-4-5-20250929-v1:0");
    route(&gl, "global.anthropic.claude-sonnet-4-5-20250929-v1:0");
    route(&h3, "anthropic.claude-3-haiku-20240307-v1:0");
    route(&s4, "eu.anthropic.claude-sonnet-4-20250514-v1:0");
    route(&nova, "amazon.nova-pro-v1:0");
    OK(bt_quotas_match(&od, BT_Q_TPM, &l, hints) == 0, "on-demand Sonnet 4.5 -> on-demand TPM");
    OK(bt_quotas_match(&cr, BT_Q_TPM, &l, hints) == 1, "us. Sonnet 4.5 -> cross-region TPM");
    OK(bt_quotas_match(&gl, BT_Q_TPM, &l, hints) == 2, "global. Sonnet 4.5 -> global TPM");
    OK(bt_quotas_match(&s4, BT_Q_TPM, &l, hints) == 3, "eu. Sonnet 4 -> its own TPM, not 4.5's");
    OK(bt_quotas_match(&cr, BT_Q_RPM, &l, hints) == 4, "us. Sonnet 4.5 -> cross-region RPM");
    OK(bt_quotas_match(&od, BT_Q_RPM, &l, hints) == -1, "on-demand Sonnet 4.5: no RPM quota");
    OK(bt_quotas_match(&gl, BT_Q_TPD, &l, hints) == 5 && bt_quotas_match(&od, BT_Q_TPD, &l, hints) == 5,
       "the daily quota applies to every inference route");
    /* 144,000,000 per day, doubled for cross-region calls: 288,000,000 */
    NEAR(bt_quotas_effective_value(&cr, BT_Q_TPD, &l.q[5]), 288000000, 0, "TPD doubled for us.");
    NEAR(bt_quotas_effective_value(&od, BT_Q_TPD, &l.q[5]), 144000000, 0, "TPD as is on-demand");
    NEAR(bt_quotas_effective_value(&cr, BT_Q_TPM, &l.q[1]), 2000000, 0, "TPM never doubled");
    OK(bt_quotas_match(&h3, BT_Q_TPM, &l, hints) == -1,
       "two different values name the same model: unknown, not a guess");
    OK(bt_quotas_match(&nova, BT_Q_TPM, &l, hints) == 8, "Amazon Nova Pro by name");
    bt_strlcpy(cr.quota_code, "L-GL45", sizeof cr.quota_code);
    OK(bt_quotas_match(&cr, BT_Q_TPM, &l, hints) == 2, "quota_code wins over the name");
    bt_strlcpy(cr.quota_code, "L-MISSING", sizeof cr.quota_code);
    OK(bt_quotas_match(&cr, BT_Q_TPM, &l, hints) == -1, "absent quota_code: unknown, no name fallback");
    struct bt_route mantle;
    route(&mantle, "anthropic.claude-sonnet-4-5-20250929-v1:0");
    mantle.endpoint = BT_EP_MANTLE;
    OK(bt_quotas_match(&mantle, BT_Q_TPM, &l, hints) == -1, "mantle routes: quotas come from config");
    bt_sq_list_free(&l);
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

int main(void)
{
    struct bt_quota_hints hints = {0};
    char err[512] = "";
    char path[4200];
    /* the shipped data file, from the source tree */
    snprintf(path, sizeof path, "%s/data/quota-names.conf", tap_srcdir());
    char *text = bt_read_file(path, 1 << 20, NULL);
    OK(text != NULL, "data/quota-names.conf readable");
    OK(text && bt_quota_hints_parse(&hints, text, path, err, sizeof err) && hints.n > 0,
       "data/quota-names.conf parses (%s)", err);
    free(text);
    test_parse_name();
    test_model_matches(&hints);
    test_route_match(&hints);
    test_pages();
    bt_quota_hints_free(&hints);
    return tap_done();
}
