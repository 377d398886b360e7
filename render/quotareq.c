/* bedtop report quota-request: the figures AWS asks for, laid out to paste. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/format.h"
#include "core/json.h"
#include "core/sanitize.h"
#include "render/reportdoc.h"

bool bt_doc_format_parse(const char *s, enum bt_doc_format *out)
{
    static const char *const names[] = {"text", "markdown", "json"};
    for (int i = 0; i < 3; i++) {
        if (!strcmp(s, names[i]) || (i == 1 && !strcmp(s, "md"))) {
            *out = (enum bt_doc_format)i;
            return true;
        }
    }
    return false;
}

/* "1,234,567" or "unknown" */
static const char *num(double v, char *out, size_t n)
{
    if (isnan(v))
        bt_strlcpy(out, "unknown", n);
    else
        bt_fmt_grouped(round(v), out, n);
    return out;
}

static const char *scope_words(enum bt_qr_scope s)
{
    static const char *const w[] = {"in-Region on-demand", "cross-Region inference profile",
                                    "global cross-Region inference profile",
                                    "bedrock-mantle endpoint",
                                    "Provisioned Throughput (model units, no quota)"};
    return w[s];
}

/* How a quota is raised, by its Adjustable flag (core/reportcalc.h). */
static const char *through_words(enum bt_qr_through t, enum bt_adjustable a, bool mantle,
                                 enum bt_qr_scope scope)
{
    if (t == BT_QR_NOWHERE)
        return "not through Service Quotas or AWS Support: Provisioned Throughput is capacity "
               "bought in model units; add model units (UpdateProvisionedModelThroughput, or the "
               "Bedrock console's Provisioned Throughput page) or buy another";
    if (t == BT_QR_SERVICE_QUOTAS)
        return a == BT_ADJ_YES ? "in the Service Quotas console (service code bedrock), quota "
                                 "code above: Service Quotas marks it adjustable"
                               : "in the Service Quotas console (service code bedrock), quota "
                                 "code above (Adjustable not listed: if it is refused, open an "
                                 "AWS Support case)";
    if (a == BT_ADJ_NO)
        return scope == BT_QR_ON_DEMAND
                   ? "through AWS Support only: Service Quotas marks this quota not adjustable "
                     "(RequestServiceQuotaIncrease refuses it) and AWS may not raise it at all; "
                     "a cross-Region inference profile has a quota of its own"
                   : "through AWS Support only: Service Quotas marks this quota not adjustable "
                     "(RequestServiceQuotaIncrease refuses it) and AWS may not raise it at all";
    return mantle ? "through AWS Support (a limit-increase case; Adjustable not listed for this "
                    "bedrock-mantle quota: if Service Quotas marks it adjustable, the console "
                    "works too)"
                  : "through AWS Support (a limit-increase case)";
}

static const char *through(const struct bt_qr_group *g)
{
    return through_words(g->side[0].through, g->side[0].adjustable, g->scope == BT_QR_MANTLE,
                         g->scope);
}

static const char *verdict_words(const struct bt_qr_group *g)
{
    switch (g->verdict) {
    case BT_QR_INCREASE:
        return "increase: the peak plus the margin needs more than the current quota";
    case BT_QR_LOWER_MAX_TOKENS:
        return "lower max_tokens first: held reservations (input + max_tokens per call in "
               "flight), not charged tokens, exceed the quota; the charged peak alone fits";
    case BT_QR_LEGACY:
        return "none: a legacy model (AWS refuses increases for it)";
    case BT_QR_PROVISIONED_CAP:
        return "none: Provisioned Throughput has no tokens-per-minute quota to raise (its "
               "capacity is the model units bought)";
    case BT_QR_QUOTA_UNKNOWN:
        return "none drafted: the applied quota is unknown, so there is no value to ask an "
               "increase from; look it up first (the size this load needs is below)";
    default:
        return "no increase needed: the peak (held reservations in) plus the margin fits";
    }
}

static const char *side_unit(const struct bt_qr_side *sd)
{
    return !strcmp(sd->name, "input") ? "input tokens per minute"
           : !strcmp(sd->name, "output") ? "output tokens per minute"
                                         : "tokens per minute (quota tokens)";
}

/* Everything a line of the document says, once, in words; the formats differ in
 * how a row is drawn (text: "label: value", Markdown: a table row). */
struct rows {
    struct bt_buf *out;
    bool md;
};

static void row(struct rows *r, const char *label, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void row(struct rows *r, const char *label, const char *fmt, ...)
{
    char v[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v, sizeof v, fmt, ap);
    va_end(ap);
    if (r->md) {
        bt_buf_printf(r->out, "| %s | ", label);
        bt_san_md_buf(r->out, v);
        bt_buf_puts(r->out, " |\n");
    } else {
        bt_buf_printf(r->out, "%-34s ", label);
        bt_san_term_buf(r->out, v, false);
        bt_buf_putc(r->out, '\n');
    }
}

static void route_list(const struct bt_qr_group *g, const struct bt_config *cfg, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (int k = 0; k < g->nroutes && k < BT_QR_MAX_ROUTES && len < n; k++)
        len += (size_t)snprintf(out + len, n - len, "%s%s%s", k ? ", " : "",
                                cfg->routes[g->routes[k]].name, g->added[k] ? "*" : "");
    if (g->nroutes > BT_QR_MAX_ROUTES && len < n)
        snprintf(out + len, n - len, " and %d more", g->nroutes - BT_QR_MAX_ROUTES);
}

/* The AWS quota a side is, in AWS's words: its Service Quotas name, else what it is
 * ("the bedrock-mantle output tokens per minute quota for <model>"); never the key
 * of bedtop's config that overrides its value. */
static void quota_words(const struct bt_qr_group *g, const struct bt_qr_side *sd, char *out,
                        size_t n)
{
    if (sd->quota_name[0])
        bt_fmt_cut(out, n, "%s%s%s%s", sd->quota_name, sd->code[0] ? " (" : "", sd->code,
                   sd->code[0] ? ")" : "");
    else
        bt_fmt_cut(out, n, "the %s %s quota for %s%s%s%s",
                   g->scope == BT_QR_MANTLE ? "bedrock-mantle" : scope_words(g->scope),
                   !strcmp(sd->name, "input")    ? "input tokens per minute"
                   : !strcmp(sd->name, "output") ? "output tokens per minute"
                                                 : "tokens per minute",
                   g->model, sd->code[0] ? " (" : "", sd->code, sd->code[0] ? ")" : "");
}

static void side_rows(struct rows *r, const struct bt_qr *q, const struct bt_qr_group *g,
                      const struct bt_qr_side *sd)
{
    char a[48], b[48], c[48], d[48];
    const char *unit = side_unit(sd);
    const char *side = g->nsides > 1 ? sd->name : "TPM";
    char lab[64], qw[300];
    const char *qlab = g->nsides > 1 ? (!strcmp(sd->name, "input") ? "Quota (input)" : "Quota (output)")
                                     : "Quota";
    bool prov = g->scope == BT_QR_PROVISIONED;
    if (prov) {
        row(r, "Capacity", "Provisioned Throughput (model units bought for %s): no "
                           "tokens-per-minute quota applies; the figures below are its measured use",
            g->model);
    } else if (sd->quota_name[0]) {
        row(r, qlab, "%s", sd->quota_name);
    } else {
        quota_words(g, sd, qw, sizeof qw);
        row(r, qlab, "%s (its Service Quotas name was not learned: look it up in the console)", qw);
    }
    snprintf(lab, sizeof lab, "Quota code%s", g->nsides > 1 ? (!strcmp(sd->name, "input") ? " (input)" : " (output)") : "");
    if (!prov)
        row(r, lab, "%s", sd->code[0] ? sd->code : "unknown (not learned from Service Quotas; "
                                                   "look it up in the console)");
    snprintf(lab, sizeof lab, "Current applied %s quota", side);
    if (prov) {
        /* no quota: the Capacity row says so */
    } else if (isnan(sd->quota)) {
        row(r, lab, "unknown%s%s%s", sd->unknown_why[0] ? " (" : "", sd->unknown_why,
            sd->unknown_why[0] ? ")" : "");
    } else if (sd->quota <= 0) {
        row(r, lab, "0 (no usable quota: access not granted, or reduced)");
    } else {
        row(r, lab, "%s %s (%s)", num(sd->quota, a, sizeof a), unit,
            bt_quota_source_name(sd->quota_source));
    }
    snprintf(lab, sizeof lab, "Steady-state %s", side);
    if (!g->busy_minutes)
        row(r, lab, "none: no minute of the window had accepted calls or tokens");
    else
        row(r, lab, "%s %s (median of %d busy minute%s)", num(sd->tpm.steady, a, sizeof a), unit,
            g->busy_minutes, g->busy_minutes == 1 ? "" : "s");
    snprintf(lab, sizeof lab, "Peak %s", side);
    row(r, lab, "%s (p99), %s (max) %s", num(sd->tpm.p99, a, sizeof a), num(sd->tpm.max, b, sizeof b),
        unit);
    snprintf(lab, sizeof lab, "Peak %s used (held in)", side);
    row(r, lab, "%s (p99), %s (max) %s: charged + reservations held by calls in flight, what "
        "the quota admits against%s", num(sd->used.p99, a, sizeof a), num(sd->used.max, b, sizeof b),
        unit, g->held_unknown_minutes ? " (held unknown in some minutes, no latency or admission "
                                        "gauge: charged alone counted there)" : "");
    if (!isnan(sd->peak_pct)) {
        char p[BT_FMT_SHORT];
        snprintf(lab, sizeof lab, "Use of the current %s quota", side);
        row(r, lab, "peak at %s%% of the applied quota%s", bt_fmt_pct(sd->peak_pct, p, sizeof p),
            sd->peak_pct < 50 ? " (AWS gives priority to accounts that use their current "
                                "allocation)"
                              : "");
    }
    bool zero = !isnan(sd->quota) && sd->quota <= 0;
    if (g->scope != BT_QR_MANTLE && !zero) {
        if (isnan(sd->ceiling) && !g->covered_minutes && !g->coverage_inferred)
            row(r, "Observed ceiling", "unknown: no minute of the window was covered by a poll");
        else if (isnan(sd->ceiling) && g->covered_minutes < g->minutes && !g->coverage_inferred)
            row(r, "Observed ceiling", "none: no covered minute was throttled (%d of %d covered; "
                                       "the others unknown)", g->covered_minutes, g->minutes);
        else if (isnan(sd->ceiling))
            row(r, "Observed ceiling", "none: no minute was throttled");
        else
            row(r, "Observed ceiling",
                "at least %s tokens per minute were accepted in a throttled minute (a lower bound "
                "on the limit that bound)%s%s%s",
                num(sd->ceiling, c, sizeof c),
                sd->ceiling_points_to ? "; far below the quota, it points to " : "",
                sd->ceiling_points_to ? sd->ceiling_why : "",
                sd->ceiling_points_to ? ", which a TPM increase may not fix" : "");
    }
    snprintf(lab, sizeof lab, "Requested %s value", side);
    if (prov)
        row(r, lab, "none: Provisioned Throughput has no quota to raise; the peak used was %s "
                    "%s: to serve more, add model units (UpdateProvisionedModelThroughput) or buy "
                    "another Provisioned Throughput", num(sd->used.max, d, sizeof d), unit);
    else if (sd->quota_unknown && !isnan(sd->ask))
        row(r, lab, "none: the applied quota is unknown, so no increase can be asked from it; "
                    "this load needs about %s %s (peak used %s x %.2f, rounded up): look up the "
                    "applied value in the Service Quotas console (service code bedrock) and "
                    "compare before filing (bedrock-mantle: ask AWS Support)", num(sd->ask, a, sizeof a), unit,
            num(sd->used.max, d, sizeof d), q->margin);
    else if (sd->quota_unknown)
        row(r, lab, "none: the applied quota is unknown and there was no usage in the window");
    else if (g->legacy)
        row(r, lab, "none: a legacy model, and AWS refuses quota increases for models scheduled "
                    "for retirement; a current model would need about %s %s for this load (peak "
                    "%s x %.2f): move the traffic and request it there",
            num(g->legacy_size, a, sizeof a), unit, num(sd->tpm.max, d, sizeof d), q->margin);
    else if (zero && isnan(sd->ask))
        row(r, lab, "the applied quota is 0: every call throttles (%s requests throttled in the "
                    "window) and no accepted usage sizes a request; ask for model access or a "
                    "first quota, then measure", num(g->throttled_requests, a, sizeof a));
    else if (isnan(sd->ask))
        row(r, lab, "none: no usage in the window");
    else if (!sd->increase_needed)
        row(r, lab, "%s (peak used %s x %.2f, rounded up): fits the current quota, no increase "
                    "needed for this load", num(sd->ask, a, sizeof a), num(sd->used.max, d, sizeof d),
            q->margin);
    else if (sd->held_only)
        row(r, lab, "none yet: the peak used %s (held reservations in) x %.2f = %s exceeds the "
                    "quota, but the charged peak %s x %.2f = %s fits: lower max_tokens first (held "
                    "reservations, not charged tokens, bind), then measure again",
            num(sd->used.max, d, sizeof d), q->margin, num(sd->ask, a, sizeof a),
            num(sd->tpm.max, b, sizeof b), q->margin, num(sd->charged_ask, c, sizeof c));
    else
        row(r, lab, "%s %s (peak used %s, held reservations in, x %.2f, rounded up)",
            num(sd->ask, a, sizeof a), unit, num(sd->used.max, d, sizeof d), q->margin);
}

static void group_rows(struct rows *r, const struct bt_qr *q, const struct bt_qr_group *g,
                       const struct bt_config *cfg)
{
    char a[48], b[48], c[48], routes[512];
    route_list(g, cfg, routes, sizeof routes);
    row(r, "Service", "Amazon Bedrock (%s endpoint), Region %s",
        g->scope == BT_QR_MANTLE ? "bedrock-mantle" : "bedrock-runtime", g->region);
    row(r, "Model", "%s", g->model);
    row(r, "Scope", "%s", scope_words(g->scope));
    if (g->legacy)
        row(r, "Legacy model", "%s: do not file an increase for it (AWS refuses them)", g->legacy_why);
    row(r, "Routes on this quota", "%s", routes);
    if (g->nadded)
        row(r, "Routes added", "%d route%s marked * %s not named by --route but draw%s on this "
                               "quota: %s in every figure, since the request is for the quota",
            g->nadded, g->nadded == 1 ? "" : "s", g->nadded == 1 ? "was" : "were",
            g->nadded == 1 ? "s" : "", g->nadded == 1 ? "it is" : "they are");
    row(r, "Verdict", "%s", verdict_words(g));
    row(r, "Request it", "%s", through(g));
    for (int s = 0; s < g->nsides; s++)
        side_rows(r, q, g, &g->side[s]);
    if (g->scope != BT_QR_MANTLE) {
        if (g->burndown != 1)
            row(r, "Quota tokens", "input + cache writes + output x %g (burndown, %s)", g->burndown,
                g->burndown_source ? g->burndown_source : "table");
        row(r, "Steady-state RPM", "%s requests per minute (median of busy minutes)",
            num(g->rpm.steady, a, sizeof a));
        row(r, "Peak RPM", "%s (p99), %s (max) requests accepted per minute",
            num(g->rpm.p99, a, sizeof a), num(g->rpm.max, b, sizeof b));
        row(r, "Peak RPM offered", "%s (max) requests per minute (accepted + throttled: offered "
            "load, retries in; not the quota's measure)", num(g->rpm_offered.max, a, sizeof a));
        if (g->scope == BT_QR_PROVISIONED)
            row(r, "RPM quota", "none (Provisioned Throughput)");
        else if (isnan(g->rpm_quota))
            row(r, "RPM quota", "none listed for this model (tokens bind, not requests)");
        else
            row(r, "RPM quota", "%s requests per minute (%s%s%s); ask %s", num(g->rpm_quota, a, sizeof a),
                bt_quota_source_name(g->rpm_source), g->rpm_code[0] ? ", " : "", g->rpm_code,
                isnan(g->rpm_ask) ? "none"
                : g->rpm_increase_needed ? num(g->rpm_ask, c, sizeof c)
                                         : "none (the peak fits)");
        if (!isnan(g->rpm_quota) && g->rpm_increase_needed)
            row(r, "Request the RPM quota", "%s",
                through_words(g->rpm_through, g->rpm_adjustable, false, g->scope));
        if (!isnan(g->daily_quota))
            row(r, "Cross-model daily quota", "%s tokens per day%s%s%s; the account's configured "
                "routes used %s%s today (an estimate: the quota is pricing-weighted); raised %s",
                num(g->daily_quota, a, sizeof a), g->daily_code[0] ? " (" : "", g->daily_code,
                g->daily_code[0] ? ")" : "", g->daily_used_q == BT_QL_LOWER ? "at least " : "",
                num(g->daily_used, b, sizeof b),
                g->daily_through == BT_QR_SERVICE_QUOTAS
                    ? "in the Service Quotas console (marked adjustable)"
                    : "only through an AWS Support case, if at all (published as Support case "
                      "only)");
    }
    if (g->tier_minutes)
        row(r, "Reserved tier (not counted)", "%s tokens per minute steady, %s (p99), %s (max) at "
                                              "peak, %s requests, in %d minute%s: served by the "
                                              "reserved service tier (its own capacity), taken out "
                                              "of the TPM figures above; overflow to Standard "
                                              "stays in them",
            num(g->tier_tpm.steady, a, sizeof a), num(g->tier_tpm.p99, b, sizeof b),
            num(g->tier_tpm.max, c, sizeof c), num(g->tier_requests, routes, sizeof routes),
            g->tier_minutes, g->tier_minutes == 1 ? "" : "s");
    row(r, "Average input tokens per request", "%s (cache reads and writes included)",
        num(g->avg_input, a, sizeof a));
    row(r, "Average output tokens per request", "%s", num(g->avg_output, a, sizeof a));
    row(r, "max_tokens in use", "%s", isnan(g->max_tokens) ? "unknown (not configured, no admission "
                                                             "gauge): the model's maximum is reserved"
                                                           : num(g->max_tokens, a, sizeof a));
    if (g->scope != BT_QR_MANTLE)
        row(r, "Minutes throttled", "%d of %d (%s requests throttled)", g->throttled_minutes,
            g->minutes, num(g->throttled_requests, a, sizeof a));
    if (g->cause)
        row(r, "Cause of the throttles", "%s (as bedtop's warnings named it: "
                                         "THROTTLED_BELOW_ESTIMATE in %d route-minute%s of the "
                                         "window)",
            g->cause_text, g->cause_minutes, g->cause_minutes == 1 ? "" : "s");
    row(r, "Minutes with data", "%d of %d (%d busy)", g->minutes_with_data, g->minutes,
        g->busy_minutes);
    row(r, "Minutes covered", "%d of %d: asked for and settled by a good poll of every route "
                              "here (a minute not asked for is unknown, not idle)%s",
        g->covered_minutes, g->minutes,
        g->coverage_inferred ? "; inferred where the source records no coverage: a minute "
                               "after a good poll counts as asked" : "");
    if (g->scope == BT_QR_CROSS_REGION)
        row(r, "Note", "one request on the cross-Region TPM quota can raise the on-demand and "
                       "daily quotas with it");
}

/* One paragraph of the request's description (the Service Quotas form or the AWS
 * Support case), under a heading naming the quota. */
static void case_para(struct bt_buf *out, bool md, const char *side, const char *text)
{
    if (md) {
        bt_buf_printf(out, "\n**Case description** (%s):\n\n> ", side);
        bt_san_md_buf(out, text);
    } else {
        bt_buf_printf(out, "\nCase description (%s):\n", side);
        bt_san_term_buf(out, text, false);
    }
    bt_buf_putc(out, '\n');
}

/* The figures AWS asks for, in the sentence every paragraph ends with. */
static void case_usage(struct bt_buf *p, const struct bt_qr *q, const struct bt_qr_group *g,
                       double ceiling)
{
    char rs[48], rp[48], in[48];
    if (g->scope != BT_QR_MANTLE)
        bt_buf_printf(p, ", %s requests per minute steady and %s at peak",
                      num(g->rpm.steady, rs, sizeof rs), num(g->rpm.max, rp, sizeof rp));
    bt_buf_printf(p, ", with %s input tokens per request on average.", num(g->avg_input, in, sizeof in));
    if (g->throttled_minutes)
        bt_buf_printf(p, " We were throttled in %d of %d minutes (%s requests)", g->throttled_minutes,
                      g->minutes, num(g->throttled_requests, rs, sizeof rs));
    if (g->throttled_minutes && !isnan(ceiling))
        bt_buf_printf(p, "; the most accepted in a throttled minute was %s tokens",
                      num(ceiling, in, sizeof in));
    if (g->throttled_minutes)
        bt_buf_putc(p, '.');
    bt_buf_printf(p, " The requested value is the peak plus %.0f%%.", 100 * (q->margin - 1));
}

/* The paragraphs that go into the request, one per quota that needs more (the
 * token sides, the RPM quota) or that is 0; written from the rows' figures. */
static void case_text(const struct bt_qr *q, const struct bt_qr_group *g, struct bt_buf *out,
                      bool md)
{
    char f[32], t[32], cur[48], ask[48], st[48], p99[48], mx[48];
    bt_fmt_iso(q->from, f, sizeof f);
    bt_fmt_iso(q->to, t, sizeof t);
    bool any = false;
    if (g->legacy) {
        if (!md)
            bt_buf_puts(out, "\nCase description: none (a legacy model: AWS refuses increases for it)\n");
        return;
    }
    struct bt_buf para = {0};
    for (int s = 0; s < g->nsides; s++) {
        const struct bt_qr_side *sd = &g->side[s];
        char what[300], from[96];
        quota_words(g, sd, what, sizeof what);
        bt_buf_reset(&para);
        if (sd->quota_unknown || g->scope == BT_QR_PROVISIONED)
            continue; /* nothing to ask "from" (the rows say what to do first) */
        /* bedtop's own setting, or the published default: not the account's applied value */
        if (sd->quota_source == BT_QS_CONFIG || sd->quota_source == BT_QS_DEFAULT)
            bt_fmt_cut(from, sizeof from, "its current value (we understand it to be %s)",
                       num(sd->quota, cur, sizeof cur));
        else
            num(sd->quota, from, sizeof from);
        if (!isnan(sd->quota) && sd->quota <= 0) {
            bt_buf_printf(&para, "The applied value of %s in %s is 0: every call is throttled (%s "
                                 "requests between %.16s and %.16s UTC). We request model access or "
                                 "a first quota for %s.", what, g->region,
                          num(g->throttled_requests, cur, sizeof cur), f, t, g->model);
        } else if (sd->increase_needed && !sd->held_only) {
            bt_buf_printf(&para, "We request an increase of %s in %s from %s to %s %s. Between %.16s "
                                 "and %.16s UTC our steady-state usage was %s and our peak %s (p99) "
                                 "to %s (max) %s",
                          what, g->region, from, num(sd->ask, ask, sizeof ask), side_unit(sd), f, t,
                          num(sd->tpm.steady, st, sizeof st), num(sd->tpm.p99, p99, sizeof p99),
                          num(sd->tpm.max, mx, sizeof mx), side_unit(sd));
            case_usage(&para, q, g, sd->ceiling);
        } else {
            continue;
        }
        case_para(out, md, sd->name, bt_buf_str(&para));
        any = true;
    }
    if (g->rpm_increase_needed && !(g->side[0].quota <= 0)) {
        bt_buf_reset(&para);
        bt_buf_printf(&para, "We request an increase of the requests-per-minute quota%s%s%s in %s "
                             "from %s to %s requests per minute. Between %.16s and %.16s UTC we "
                             "made %s accepted requests per minute steady and %s at peak (p99 %s)",
                      g->rpm_code[0] ? " (" : "", g->rpm_code, g->rpm_code[0] ? ")" : "", g->region,
                      num(g->rpm_quota, cur, sizeof cur), num(g->rpm_ask, ask, sizeof ask), f, t,
                      num(g->rpm.steady, st, sizeof st), num(g->rpm.max, mx, sizeof mx),
                      num(g->rpm.p99, p99, sizeof p99));
        bt_buf_printf(&para, ", with %s input tokens per request on average. The requested value "
                             "is the peak plus %.0f%%.", num(g->avg_input, st, sizeof st),
                      100 * (q->margin - 1));
        case_para(out, md, "rpm", bt_buf_str(&para));
        any = true;
    }
    bt_buf_free(&para);
    if (!any && !md)
        bt_buf_puts(out, g->verdict == BT_QR_LOWER_MAX_TOKENS
                             ? "\nCase description: none yet (held reservations, not charged "
                               "tokens, exceed the quota: lower max_tokens first)\n"
                         : g->verdict == BT_QR_PROVISIONED_CAP
                             ? "\nCase description: none (Provisioned Throughput has no quota: "
                               "add model units)\n"
                         : g->verdict == BT_QR_QUOTA_UNKNOWN
                             ? "\nCase description: none (the applied quota is unknown: look it "
                               "up in Service Quotas first)\n"
                             : "\nCase description: none needed (the peak plus the margin fits "
                               "the current quota)\n");
}

static void render_doc(const struct bt_qr *q, const struct bt_config *cfg, bool md,
                       const char *source, int64_t generated, struct bt_buf *out)
{
    char f[32], t[32], g[32];
    bt_fmt_iso(q->from, f, sizeof f);
    bt_fmt_iso(q->to, t, sizeof t);
    bt_fmt_iso(generated, g, sizeof g);
    struct rows r = {.out = out, .md = md};
    if (md) {
        bt_buf_puts(out, "# Quota increase request\n\n");
        bt_buf_printf(out, "Usage from %s to %s (CloudWatch data minutes, UTC), from ", f, t);
        bt_san_md_buf(out, source);
        bt_buf_printf(out, "; made by bedtop %s at %s. Token figures are quota tokens per minute "
                           "as Bedrock charges them at completion, and used: charged + the "
                           "reservations held by calls in flight (the quota's measure); the "
                           "requested value is the peak used x %.2f, rounded up.\n",
                      BEDTOP_VERSION, g, q->margin);
    } else {
        bt_buf_printf(out, "Quota increase request (bedtop %s, %s)\n", BEDTOP_VERSION, g);
        bt_buf_printf(out, "Usage window: %s to %s (CloudWatch data minutes, UTC), from ", f, t);
        bt_san_term_buf(out, source, false);
        bt_buf_printf(out, "\nRequested value = peak used (held reservations in) x %.2f, rounded "
                           "up to two significant figures.\n", q->margin);
    }
    if (!q->ngroups)
        bt_buf_puts(out, md ? "\nNo route in the window.\n" : "\nno route in the window\n");
    for (int i = 0; i < q->ngroups; i++) {
        const struct bt_qr_group *gr = &q->groups[i];
        char routes[512];
        route_list(gr, cfg, routes, sizeof routes);
        if (md) {
            bt_buf_puts(out, "\n## ");
            bt_san_md_buf(out, routes);
            bt_buf_printf(out, " (%s, ", bt_qr_scope_name(gr->scope));
            bt_san_md_buf(out, gr->region); /* the recording's: from outside */
            bt_buf_puts(out, ")\n\n| figure | value |\n|---|---|\n");
        } else {
            bt_buf_puts(out, "\n== ");
            bt_san_term_buf(out, routes, false);
            bt_buf_printf(out, " (%s, ", bt_qr_scope_name(gr->scope));
            bt_san_term_buf(out, gr->region, false); /* the recording's: from outside */
            bt_buf_puts(out, ") ==\n");
        }
        group_rows(&r, q, gr, cfg);
        case_text(q, gr, out, md);
    }
}

static void add_num(cJSON *o, const char *k, double v)
{
    if (isnan(v) || isinf(v))
        cJSON_AddNullToObject(o, k);
    else
        cJSON_AddNumberToObject(o, k, round(v * 1000) / 1000);
}

/* Service Quotas' Adjustable: true, false, or null (not listed) */
static void add_adjustable(cJSON *o, enum bt_adjustable a)
{
    if (a == BT_ADJ_UNKNOWN)
        cJSON_AddNullToObject(o, "adjustable");
    else
        cJSON_AddBoolToObject(o, "adjustable", a == BT_ADJ_YES);
}

static void add_stat(cJSON *o, const char *k, const struct bt_qr_stat *s)
{
    cJSON *j = cJSON_AddObjectToObject(o, k);
    add_num(j, "steady", s->steady);
    add_num(j, "peak_p99", s->p99);
    add_num(j, "peak_max", s->max);
}

static cJSON *group_json(const struct bt_qr_group *g, const struct bt_config *cfg)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *rs = cJSON_AddArrayToObject(o, "routes");
    cJSON *ra = cJSON_CreateArray();
    for (int k = 0; k < g->nroutes && k < BT_QR_MAX_ROUTES; k++) {
        cJSON_AddItemToArray(rs, cJSON_CreateString(cfg->routes[g->routes[k]].name));
        if (g->added[k])
            cJSON_AddItemToArray(ra, cJSON_CreateString(cfg->routes[g->routes[k]].name));
    }
    cJSON_AddItemToObject(o, "routes_added", ra);
    cJSON_AddStringToObject(o, "model_id", g->model);
    cJSON_AddStringToObject(o, "region", g->region);
    cJSON_AddStringToObject(o, "scope", bt_qr_scope_name(g->scope));
    cJSON_AddStringToObject(o, "request_through", bt_qr_through_name(g->side[0].through));
    cJSON_AddStringToObject(o, "verdict", bt_qr_verdict_name(g->verdict));
    add_num(o, "burndown", g->burndown);
    cJSON_AddBoolToObject(o, "legacy", g->legacy);
    if (g->legacy)
        cJSON_AddStringToObject(o, "legacy_reason", g->legacy_why);
    else
        cJSON_AddNullToObject(o, "legacy_reason");
    add_num(o, "size_for_current_model", g->legacy_size);
    if (g->tier_minutes) {
        cJSON *tj = cJSON_AddObjectToObject(o, "reserved_tier");
        cJSON_AddNumberToObject(tj, "minutes", g->tier_minutes);
        add_stat(tj, "tokens_per_minute", &g->tier_tpm);
        add_num(tj, "requests", g->tier_requests);
    } else {
        cJSON_AddNullToObject(o, "reserved_tier");
    }
    cJSON *qs = cJSON_AddArrayToObject(o, "quotas");
    for (int s = 0; s < g->nsides; s++) {
        const struct bt_qr_side *sd = &g->side[s];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "side", sd->name);
        if (sd->code[0])
            cJSON_AddStringToObject(j, "code", sd->code);
        else
            cJSON_AddNullToObject(j, "code");
        if (sd->quota_name[0])
            cJSON_AddStringToObject(j, "name", sd->quota_name);
        add_num(j, "current", sd->quota);
        cJSON_AddStringToObject(j, "current_source", bt_quota_source_name(sd->quota_source));
        add_adjustable(j, sd->adjustable);
        cJSON_AddStringToObject(j, "request_through", bt_qr_through_name(sd->through));
        add_stat(j, "tokens_per_minute", &sd->tpm);
        add_stat(j, "used_per_minute", &sd->used);
        add_num(j, "charged_ask", sd->charged_ask);
        cJSON_AddBoolToObject(j, "held_only", sd->held_only);
        add_num(j, "peak_pct_of_quota", sd->peak_pct);
        add_num(j, "observed_ceiling", sd->ceiling);
        cJSON_AddStringToObject(j, "observed_ceiling_quality",
                                isnan(sd->ceiling) ? "unknown" : "lower-bound");
        if (sd->ceiling_points_to)
            cJSON_AddStringToObject(j, "observed_ceiling_points_to", sd->ceiling_points_to);
        else
            cJSON_AddNullToObject(j, "observed_ceiling_points_to");
        add_num(j, "ask", sd->ask);
        if (sd->quota_unknown && g->scope != BT_QR_PROVISIONED)
            cJSON_AddNullToObject(j, "increase_needed"); /* not known without the quota */
        else
            cJSON_AddBoolToObject(j, "increase_needed", sd->increase_needed);
        cJSON_AddItemToArray(qs, j);
    }
    cJSON *rpm = cJSON_AddObjectToObject(o, "rpm");
    add_stat(rpm, "requests_per_minute", &g->rpm);
    add_stat(rpm, "offered_per_minute", &g->rpm_offered);
    add_num(rpm, "current", g->rpm_quota);
    if (g->rpm_code[0])
        cJSON_AddStringToObject(rpm, "code", g->rpm_code);
    add_adjustable(rpm, g->rpm_adjustable);
    cJSON_AddStringToObject(rpm, "request_through", bt_qr_through_name(g->rpm_through));
    if (!isnan(g->daily_quota)) {
        cJSON *d = cJSON_AddObjectToObject(o, "daily-account");
        add_num(d, "current", g->daily_quota);
        cJSON_AddStringToObject(d, "code", g->daily_code);
        add_num(d, "used_today", g->daily_used);
        cJSON_AddStringToObject(d, "used_quality", bt_quality_name(g->daily_used_q));
        add_adjustable(d, g->daily_adjustable);
        cJSON_AddStringToObject(d, "request_through", bt_qr_through_name(g->daily_through));
    } else {
        cJSON_AddNullToObject(o, "daily-account");
    }
    add_num(rpm, "ask", g->rpm_ask);
    cJSON_AddBoolToObject(rpm, "increase_needed", g->rpm_increase_needed);
    add_num(o, "avg_input_tokens_per_request", g->avg_input);
    add_num(o, "avg_output_tokens_per_request", g->avg_output);
    add_num(o, "max_tokens", g->max_tokens);
    add_num(o, "requests", g->requests);
    add_num(o, "throttled_requests", g->throttled_requests);
    cJSON_AddNumberToObject(o, "minutes", g->minutes);
    cJSON_AddNumberToObject(o, "minutes_with_data", g->minutes_with_data);
    cJSON_AddNumberToObject(o, "covered_minutes", g->covered_minutes);
    if (g->cause) {
        cJSON *c = cJSON_AddObjectToObject(o, "throttle_cause");
        cJSON_AddStringToObject(c, "cause", g->cause);
        cJSON_AddStringToObject(c, "text", g->cause_text);
        cJSON_AddNumberToObject(c, "route_minutes", g->cause_minutes);
        cJSON_AddStringToObject(c, "action", g->cause_action ? g->cause_action : "");
    } else {
        cJSON_AddNullToObject(o, "throttle_cause");
    }
    cJSON_AddNumberToObject(o, "busy_minutes", g->busy_minutes);
    cJSON_AddNumberToObject(o, "throttled_minutes", g->throttled_minutes);
    cJSON_AddNumberToObject(o, "held_unknown_minutes", g->held_unknown_minutes);
    return o;
}

void bt_qr_render(const struct bt_qr *q, const struct bt_config *cfg, enum bt_doc_format f,
                  const char *source, int64_t generated, struct bt_buf *out)
{
    if (f != BT_DOC_JSON) {
        render_doc(q, cfg, f == BT_DOC_MARKDOWN, source, generated, out);
        return;
    }
    char a[32];
    cJSON *o = cJSON_CreateObject();
    bt_fmt_iso(generated, a, sizeof a);
    cJSON_AddStringToObject(o, "generated_at", a);
    cJSON_AddStringToObject(o, "source", source);
    cJSON *w = cJSON_AddObjectToObject(o, "window");
    bt_fmt_iso(q->from, a, sizeof a);
    cJSON_AddStringToObject(w, "from", a);
    bt_fmt_iso(q->to, a, sizeof a);
    cJSON_AddStringToObject(w, "to", a);
    cJSON_AddNumberToObject(o, "margin", q->margin);
    cJSON *gs = cJSON_AddArrayToObject(o, "quota_groups");
    for (int i = 0; i < q->ngroups; i++)
        cJSON_AddItemToArray(gs, group_json(&q->groups[i], cfg));
    char *s = bt_json_print(o, true);
    bt_san_json_text(out, s);
    bt_buf_putc(out, '\n');
    cJSON_free(s);
    cJSON_Delete(o);
}
