/* The config's INI text (bedtop.conf(5)) into a struct bt_config: inih splits
 * the lines (from a buffer: io/conffile.c reads the file), this checks every key
 * and names the line of the first problem (core/config_index.c finds the lines). */
#include "core/config.h"

#include <ctype.h>
#include <ini.h>
#include <stdio.h>
#include <string.h>

#include "core/config_int.h"
#include "core/format.h"
#include "core/plausible.h"
#include "core/util.h"

/* Sets a positive number, or records why not. */
static bool num(struct parse_ctx *p, const char *key, const char *value, double min, double max,
                double *out)
{
    double d;
    /* decimal only: strtod would take 0x10 (and 0x1p4) as 16 */
    if (strpbrk(value, "xX") || !bt_parse_double(value, &d) || d < min || d > max) {
        char lo[BT_FMT_LONG], hi[BT_FMT_LONG];
        snprintf(p->err, sizeof p->err, "bad number for %s: '%s'; use %s to %s%s", key, value,
                 bt_fmt_grouped(min, lo, sizeof lo), bt_fmt_grouped(max, hi, sizeof hi),
                 strpbrk(value, "xX") ? " in decimal (no hex)" : "");
        return false;
    }
    *out = d;
    return true;
}

static bool duration(struct parse_ctx *p, const char *key, const char *value, double min,
                     double *out)
{
    double d;
    if (!bt_parse_duration(value, &d) || d < min) {
        snprintf(p->err, sizeof p->err, "bad duration for %s: '%s' (e.g. 60, 90s, 5m)", key,
                 value);
        return false;
    }
    *out = d;
    return true;
}

static bool set_str(struct parse_ctx *p, const char *key, const char *value, char *dst, size_t n)
{
    if (strlen(value) >= n) {
        snprintf(p->err, sizeof p->err, "value of %s too long (at most %zu characters)", key,
                 n - 1);
        return false;
    }
    bt_strlcpy(dst, value, n);
    return true;
}

/* A CloudWatch AccountId: the 12 digits of an AWS account. */
static bool account_key(struct parse_ctx *p, const char *key, const char *v, char dst[16])
{
    if (strlen(v) != 12 || strspn(v, "0123456789") != 12) {
        snprintf(p->err, sizeof p->err, "bad %s '%s' (an AWS account ID: 12 digits)", key, v);
        return false;
    }
    bt_strlcpy(dst, v, 16);
    return true;
}

static bool parse_bool(const char *v, bool *out)
{
    if (bt_streq_nocase(v, "true") || bt_streq_nocase(v, "yes") || strcmp(v, "1") == 0 ||
        bt_streq_nocase(v, "on"))
        return *out = true, true;
    if (bt_streq_nocase(v, "false") || bt_streq_nocase(v, "no") || strcmp(v, "0") == 0 ||
        bt_streq_nocase(v, "off"))
        return *out = false, true;
    return false;
}

/* The keys each section knows, for "did you mean" (the parsers below are the truth). */
static const char *const global_keys[] = {
    "profile", "region", "endpoint_url", "admission", "theme", "interval", "admission_gap",
    "cloudwatch_lag", "history", "warn_headroom", "crit_headroom", "daily_warn", "daily_crit",
    "oversize_factor", "oversize_margin", "retry_share", "cache_read_reserved", "account",
    "detail_interval", "adaptive_cadence", "price_list", "budget_usd_per_day",
    "spend_spike_factor", "spend_spike_floor", "spend_spike_minutes", "share_label",
    "share_top_n", "attribute_by", NULL};
static const char *const route_keys[] = {
    "model", "region", "profile", "project", "admission", "quota_code", "endpoint", "inference",
    "priority", "max_tokens", "concurrency_limit", "burndown", "quota_tpm", "quota_rpm",
    "quota_tpd", "quota_input_tpm", "quota_output_tpm", "quota_reserved_input_tpm",
    "quota_reserved_output_tpm", "quota_tpd_account", "base_model", "account", "context", "tier", "model_units", "budget_usd_per_day", NULL};

/* Levenshtein distance, case-insensitive, bounded: keys are short. */
static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 99;
    int row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            int best = diag + cost;
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* "unknown key 'k' in [where]", with "; did you mean 'x'?" when one key is close. */
static bool unknown_key(struct parse_ctx *p, const char *k, const char *where,
                        const char *const *known)
{
    const char *best = NULL;
    int bd = 99;
    for (int i = 0; known[i]; i++) {
        int d = edit_distance(k, known[i]);
        if (d < bd) {
            bd = d;
            best = known[i];
        }
    }
    int len = (int)strlen(k);
    if (best && bd <= (len < 6 ? 1 : len < 10 ? 2 : 3))
        snprintf(p->err, sizeof p->err, "unknown key '%s' in [%s]; did you mean '%s'?", k, where,
                 best);
    else
        snprintf(p->err, sizeof p->err, "unknown key '%s' in [%s]; see bedtop.conf(5) for the keys",
                 k, where);
    return false;
}

/* Route names: letters, digits and - _ . : / (what a ModelId or profile name
 * uses), starting with a letter or digit: nothing a terminal, a CSV reader or a
 * Prometheus label would take for anything but text. */
static bool valid_route_name(const char *s)
{
    if (!isalnum((unsigned char)s[0]))
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("-_.:/", *s))
            return false;
    return true;
}

static bool set_region(struct parse_ctx *p, const char *k, const char *v, char *dst, size_t n)
{
    if (!bt_config_valid_region(v)) {
        snprintf(p->err, sizeof p->err, "bad %s '%s'; use an AWS Region name like us-east-1", k, v);
        return false;
    }
    return set_str(p, k, v, dst, n);
}

static int spend_route_key(struct parse_ctx *p, struct bt_route *r, const char *k, const char *v);
static int spend_global_key(struct parse_ctx *p, const char *k, const char *v);

/* share_label: a Prometheus label name; share_top_n: 1 to 1000 holders. */
static bool share_key(struct parse_ctx *p, const char *k, const char *v)
{
    struct bt_config *c = p->c;
    if (!strcmp(k, "share_top_n")) {
        double d;
        if (!num(p, k, v, 1, 1000, &d))
            return false;
        c->share_top_n = (int)d;
        return true;
    }
    bool ok = (isalpha((unsigned char)v[0]) || v[0] == '_') && strlen(v) < sizeof c->share_label;
    for (const char *q = v; ok && *q; q++)
        ok = isalnum((unsigned char)*q) || *q == '_';
    if (!ok) {
        snprintf(p->err, sizeof p->err, "bad share_label '%s' (a Prometheus label name like team)", v);
        return false;
    }
    return set_str(p, k, v, c->share_label, sizeof c->share_label);
}

static bool global_key(struct parse_ctx *p, const char *k, const char *v)
{
    struct bt_config *c = p->c;
    if (!strcmp(k, "profile"))
        return set_str(p, k, v, c->profile, sizeof c->profile);
    if (!strcmp(k, "region"))
        return set_region(p, k, v, c->region, sizeof c->region);
    if (!strcmp(k, "endpoint_url"))
        return set_str(p, k, v, c->endpoint_url, sizeof c->endpoint_url);
    if (!strcmp(k, "admission"))
        return set_str(p, k, v, c->admission, sizeof c->admission);
    if (!strcmp(k, "account"))
        return account_key(p, k, v, c->account);
    if (!strcmp(k, "detail_interval"))
        return duration(p, k, v, 0, &c->detail_interval);
    if (!strcmp(k, "adaptive_cadence")) {
        if (parse_bool(v, &c->adaptive_cadence))
            return true;
        snprintf(p->err, sizeof p->err, "bad adaptive_cadence '%s' (yes or no)", v);
        return false;
    }
    if (!strcmp(k, "price_list")) {
        if (parse_bool(v, &c->price_list))
            return true;
        snprintf(p->err, sizeof p->err, "bad price_list '%s' (on or off)", v);
        return false;
    }
    if (!strcmp(k, "theme"))
        return set_str(p, k, v, c->theme, sizeof c->theme);
    if (!strcmp(k, "interval"))
        return duration(p, k, v, 1, &c->interval);
    if (!strcmp(k, "admission_gap"))
        return duration(p, k, v, 0.1, &c->admission_gap);
    if (!strcmp(k, "cloudwatch_lag"))
        return duration(p, k, v, 0, &c->cw_lag);
    if (!strcmp(k, "history")) {
        double d;
        if (!duration(p, k, v, 600, &d))
            return false;
        if (d > 15 * 86400) {
            snprintf(p->err, sizeof p->err, "history at most 15d (CloudWatch keeps 1-minute data 15 days)");
            return false;
        }
        c->history_minutes = (int)(d / 60);
        c->history_set = true;
        return true;
    }
    if (!strcmp(k, "warn_headroom") || !strcmp(k, "crit_headroom")) {
        struct bt_threshold *t = k[0] == 'w' ? &c->warn : &c->crit;
        if (!bt_parse_threshold(v, t)) {
            snprintf(p->err, sizeof p->err, "bad %s '%s' (a percentage like 20%% or tokens per minute)", k, v);
            return false;
        }
        return true;
    }
    if (!strcmp(k, "daily_warn"))
        return num(p, k, v, 1, 100, &c->daily_warn_pct);
    if (!strcmp(k, "daily_crit"))
        return num(p, k, v, 1, 100, &c->daily_crit_pct);
    if (!strcmp(k, "oversize_factor"))
        return num(p, k, v, 1, 1000, &c->oversize_factor);
    if (!strcmp(k, "oversize_margin"))
        return num(p, k, v, 0, 10, &c->oversize_margin);
    if (!strcmp(k, "retry_share"))
        return num(p, k, v, 0.01, 1, &c->retry_share);
    if (!strcmp(k, "attribute_by")) {
        /* tag:KEY, an AWS tag key: 1 to 128 printable characters */
        const char *key = !strncmp(v, "tag:", 4) ? v + 4 : NULL;
        bool ok = key && key[0] && strlen(key) < sizeof c->attribute_tag;
        for (const char *q = key; ok && *q; q++)
            ok = isalnum((unsigned char)*q) || strchr(" _.:/=+-@", *q);
        if (!ok) {
            snprintf(p->err, sizeof p->err, "bad attribute_by '%s' (tag:KEY, e.g. tag:team)", v);
            return false;
        }
        return set_str(p, k, key, c->attribute_tag, sizeof c->attribute_tag);
    }
    if (!strcmp(k, "share_label") || !strcmp(k, "share_top_n"))
        return share_key(p, k, v);
    if (!strcmp(k, "cache_read_reserved")) {
        /* obsolete since headroom v2: cache reads always count in the reservation,
         * as AWS reserves a request's total input; still accepted in old configs */
        bool ignored;
        if (!parse_bool(v, &ignored)) {
            snprintf(p->err, sizeof p->err, "bad boolean for %s: '%s' (true or false)", k, v);
            return false;
        }
        return true;
    }
    int sk = spend_global_key(p, k, v);
    if (sk)
        return sk > 0;
    return unknown_key(p, k, "bedtop", global_keys);
}

static bool quota_key(struct parse_ctx *p, struct bt_route *r, enum bt_quota_kind kind,
                      const char *k, const char *v)
{
    double d;
    if (!num(p, k, v, 1, 1e15, &d))
        return false;
    r->quota[kind].value = d;
    r->quota[kind].source = BT_QS_CONFIG;
    r->quota_match[kind] = BT_QM_CONFIG;
    snprintf(r->quota[kind].name, sizeof r->quota[kind].name, "%s in config", k);
    return true;
}

static bool route_key(struct parse_ctx *p, struct bt_route *r, const char *k, const char *v)
{
    if (!strcmp(k, "model"))
        return set_str(p, k, v, r->model, sizeof r->model);
    if (!strcmp(k, "region"))
        return set_region(p, k, v, r->region, sizeof r->region);
    if (!strcmp(k, "profile"))
        return set_str(p, k, v, r->profile, sizeof r->profile);
    if (!strcmp(k, "project"))
        return set_str(p, k, v, r->project, sizeof r->project);
    if (!strcmp(k, "base_model"))
        return set_str(p, k, v, r->base_model, sizeof r->base_model);
    if (!strcmp(k, "account"))
        return account_key(p, k, v, r->account);
    if (!strcmp(k, "context")) {
        if (!strcmp(v, "standard"))
            r->context[0] = '\0';
        else if (!strcmp(v, "1m"))
            bt_strlcpy(r->context, v, sizeof r->context);
        else
            return snprintf(p->err, sizeof p->err, "bad context '%s' (standard or 1m)", v), false;
        return true;
    }
    if (!strcmp(k, "admission"))
        return set_str(p, k, v, r->admission, sizeof r->admission);
    if (!strcmp(k, "quota_code"))
        return set_str(p, k, v, r->quota_code, sizeof r->quota_code);
    if (!strcmp(k, "endpoint")) {
        if (!strcmp(v, "runtime") || !strcmp(v, "bedrock-runtime"))
            r->endpoint = BT_EP_RUNTIME;
        else if (!strcmp(v, "mantle") || !strcmp(v, "bedrock-mantle"))
            r->endpoint = BT_EP_MANTLE;
        else
            return snprintf(p->err, sizeof p->err, "bad endpoint '%s' (runtime or mantle)", v), false;
        return true;
    }
    if (!strcmp(k, "inference")) {
        int inf = bt_inference_by_name(v);
        if (inf < 0)
            return snprintf(p->err, sizeof p->err,
                            "bad inference '%s' (on-demand, cross-region, global, "
                            "latency-optimized or provisioned)", v), false;
        r->inference = (enum bt_inference)inf;
        r->inference_set = true;
        return true;
    }
    if (!strcmp(k, "priority")) {
        if (!strcmp(v, "online"))
            r->priority = BT_PRIO_ONLINE;
        else if (!strcmp(v, "offline"))
            r->priority = BT_PRIO_OFFLINE;
        else
            return snprintf(p->err, sizeof p->err, "bad priority '%s' (online or offline)", v), false;
        return true;
    }
    if (!strcmp(k, "max_tokens"))
        return num(p, k, v, 1, BT_MAX_TOKENS_SETTING, &r->max_tokens);
    if (!strcmp(k, "concurrency_limit"))
        return num(p, k, v, 1, 1000000, &r->concurrency_limit);
    if (!strcmp(k, "burndown")) {
        if (!num(p, k, v, 1, BT_MAX_BURNDOWN, &r->burndown))
            return false;
        r->burndown_source = "config";
        return true;
    }
    if (!strcmp(k, "quota_tpm"))
        return quota_key(p, r, BT_Q_TPM, k, v);
    if (!strcmp(k, "quota_rpm"))
        return quota_key(p, r, BT_Q_RPM, k, v);
    if (!strcmp(k, "quota_tpd"))
        return quota_key(p, r, BT_Q_TPD, k, v);
    if (!strcmp(k, "quota_input_tpm"))
        return quota_key(p, r, BT_Q_INPUT_TPM, k, v);
    if (!strcmp(k, "quota_output_tpm"))
        return quota_key(p, r, BT_Q_OUTPUT_TPM, k, v);
    if (!strcmp(k, "quota_reserved_input_tpm"))
        return quota_key(p, r, BT_Q_RES_INPUT_TPM, k, v);
    if (!strcmp(k, "quota_reserved_output_tpm"))
        return quota_key(p, r, BT_Q_RES_OUTPUT_TPM, k, v);
    if (!strcmp(k, "quota_tpd_account"))
        return quota_key(p, r, BT_Q_TPD_ACCOUNT, k, v);
    char where[80];
    int sk = spend_route_key(p, r, k, v);
    if (sk)
        return sk > 0;
    snprintf(where, sizeof where, "route %s", r->name);
    return unknown_key(p, k, where, route_keys);
}

/* A [prices] row (core/prices.h), after the data file and the Price List API's cache. */
static int price_row(struct parse_ctx *p, const char *name, const char *value)
{
    char why[256];
    if (bt_prices_add_line(&p->c->prices, name, value, "config [prices]", why, sizeof why))
        return 1;
    snprintf(p->err, sizeof p->err, "bad price row '%s = %s': %s", name, value, why);
    return 0;
}

/* The spend keys of a route (core/cost.h): 1 taken, 0 not a spend key, -1 bad value. */
static int spend_route_key(struct parse_ctx *p, struct bt_route *r, const char *k, const char *v)
{
    if (!strcmp(k, "tier")) {
        int t = bt_tier_by_name(v);
        if (t < 0) {
            snprintf(p->err, sizeof p->err,
                     "bad tier '%s' (standard, priority, flex, reserved or batch)", v);
            return -1;
        }
        r->tier = t;
        return 1;
    }
    if (!strcmp(k, "model_units"))
        return num(p, k, v, 1, BT_MODEL_UNITS_MAX, &r->model_units) ? 1 : -1;
    if (!strcmp(k, "budget_usd_per_day"))
        return num(p, k, v, BT_BUDGET_MIN, BT_BUDGET_MAX, &r->budget_usd_per_day) ? 1 : -1;
    return 0;
}

/* The spend keys of [bedtop]: 1 taken, 0 not a spend key, -1 bad value. */
static int spend_global_key(struct parse_ctx *p, const char *k, const char *v)
{
    if (!strcmp(k, "budget_usd_per_day"))
        return num(p, k, v, BT_BUDGET_MIN, BT_BUDGET_MAX, &p->c->budget_usd_per_day) ? 1 : -1;
    if (!strcmp(k, "spend_spike_factor"))
        return num(p, k, v, BT_SPIKE_FACTOR_MIN, BT_SPIKE_FACTOR_MAX, &p->c->spend_spike_factor) ? 1 : -1;
    if (!strcmp(k, "spend_spike_floor"))
        return num(p, k, v, 0, BT_SPIKE_FLOOR_MAX, &p->c->spend_spike_floor) ? 1 : -1;
    if (!strcmp(k, "spend_spike_minutes")) {
        double d;
        if (!num(p, k, v, 1, BT_SPIKE_MINUTES_MAX, &d))
            return -1;
        p->c->spend_spike_minutes = (int)d;
        return 1;
    }
    return 0;
}

/* [team NAME] / [group ROUTE]: budget_usd_per_day of a team (the shares' team label)
 * or of the quota group route ROUTE draws from (SPEND_SPIKE, core/cost.h). */
static int budget_section(struct parse_ctx *p, bool team, const char *section, const char *name,
                          const char *value)
{
    const char *who = section + (team ? 5 : 6);
    while (*who == ' ')
        who++;
    if (!*who || strlen(who) >= sizeof p->c->budgets[0].name) {
        snprintf(p->err, sizeof p->err, "bad name in [%s]; use [team NAME] or [group ROUTE]",
                 section);
        return 0;
    }
    if (strcmp(name, "budget_usd_per_day") != 0) {
        snprintf(p->err, sizeof p->err, "unknown key '%s' in [%s]; it takes budget_usd_per_day",
                 name, section);
        return 0;
    }
    if (p->c->nbudgets >= BT_BUDGETS_MAX) {
        snprintf(p->err, sizeof p->err, "more than %d [team]/[group] budgets", BT_BUDGETS_MAX);
        return 0;
    }
    struct bt_budget *b = &p->c->budgets[p->c->nbudgets];
    if (!num(p, name, value, BT_BUDGET_MIN, BT_BUDGET_MAX, &b->usd))
        return 0;
    b->team = team;
    bt_strlcpy(b->name, who, sizeof b->name);
    p->c->nbudgets++;
    return 1;
}

/* A [group ROUTE] names a route of the config (after every route is read). */
static bool check_budgets(const struct bt_config *c, const char *name, char *err, size_t errlen)
{
    for (int i = 0; i < c->nbudgets; i++)
        if (!c->budgets[i].team && bt_config_find_route(c, c->budgets[i].name) < 0) {
            snprintf(err, errlen, "%s: [group %s] names no route; name one route of the quota "
                     "group", name, c->budgets[i].name);
            return false;
        }
    return true;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
    struct parse_ctx *p = user;
    if (p->err[0])
        return 1; /* report the first error only */
    if (!strcmp(section, "prices"))
        return price_row(p, name, value); /* one pattern may have a row per tier */
    if (bt_ini_duplicate_key(p, section, name))
        return 0;
    if (!strcmp(section, "bedtop"))
        return global_key(p, name, value);
    if (!strcmp(section, "burndown")) {
        double f;
        if (!num(p, name, value, 1, 1000, &f))
            return 0;
        bt_burndown_add(&p->c->burndown, name, f, -1, "config [burndown]");
        return 1;
    }
    if (!strncmp(section, "team ", 5) || !strncmp(section, "group ", 6))
        return budget_section(p, section[0] == 't', section, name, value);
    if (!strncmp(section, "route ", 6)) {
        const char *rn = section + 6;
        while (*rn == ' ')
            rn++;
        if (!*rn || strlen(rn) >= sizeof p->c->routes[0].name || !valid_route_name(rn)) {
            snprintf(p->err, sizeof p->err,
                     "bad route name in [%s]; use up to %zu letters, digits and - _ . : / "
                     "starting with a letter or digit", section,
                     (size_t)(INI_SECTION_MAX - 6)); /* what inih keeps of "route NAME" */
            return 0;
        }
        int i = bt_ini_route_of_section(p, section, rn);
        return route_key(p, &p->c->routes[i], name, value);
    }
    if (!*section)
        snprintf(p->err, sizeof p->err,
                 "'%s' is outside any section; put it under [bedtop] or [route NAME]", name);
    else
        snprintf(p->err, sizeof p->err,
                 "unknown section [%s]; use [bedtop], [route NAME], [team NAME], [group ROUTE], "
                 "[burndown] or [prices]", section);
    return 0;
}

/* The syntax problem of line n of text, if it has one inih would reject: an
 * unterminated [section, or a line that is neither key = value nor a comment. */
static bool line_problem(const char *text, int n, char *why, size_t len)
{
    const char *p = text;
    for (int i = 1; i < n && p; i++) {
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    if (!p)
        return false;
    size_t l = strcspn(p, "\n");
    char line[128];
    snprintf(line, sizeof line, "%.*s", (int)(l < 100 ? l : 100), p);
    char *t = bt_trim(line);
    if (t[0] == '[' && !strchr(t, ']')) {
        snprintf(why, len, "unterminated section header '%s'; close it with ']'", t);
        return true;
    }
    if (t[0] && t[0] != ';' && t[0] != '#' && t[0] != '[' && !strchr(t, '=') && !strchr(t, ':')) {
        snprintf(why, len, "'%s' is not key = value or [section]; fix or remove the line", t);
        return true;
    }
    return false;
}

bool bt_config_parse_string(struct bt_config *c, const char *text, const char *name, char *err,
                            size_t errlen)
{
    struct parse_ctx p = {.c = c, .text = text, .name = name};
    /* the data file first: [burndown] lines of the config come later and win */
    if (!bt_config_need_burndown(c)) {
        snprintf(err, errlen, "%s", c->burndown_error);
        return false;
    }
    /* inih reads a line past its buffer as a new line: a directive hidden in a long
     * comment would take effect. Refused before parsing, naming the line. */
    int longl = bt_first_long_line(text, BT_CONFIG_MAX_LINE);
    if (longl) {
        snprintf(err, errlen, "%s:%d: line longer than %d bytes; bedtop does not split "
                 "it (shorten the value or the comment)", name, longl, BT_CONFIG_MAX_LINE);
        return false;
    }
    /* Debian's inih cuts lines at 200 bytes by default; URLs can be longer. Its
     * continuation lines are off: an indented "key = value" is a key of its own
     * (as an indented style means), never appended to the key above. */
    bool use_stack = ini_use_stack, allow_realloc = ini_allow_realloc;
    bool multiline = ini_allow_multiline;
    int max_line = ini_max_line;
    ini_use_stack = false;
    ini_allow_realloc = true;
    ini_allow_multiline = false;
    ini_max_line = BT_CONFIG_MAX_LINE + 2; /* the line, its newline, the NUL */
    int rc = ini_parse_string(text, handler, &p);
    ini_use_stack = use_stack;
    ini_allow_realloc = allow_realloc;
    ini_allow_multiline = multiline;
    ini_max_line = max_line;
    bool ok = rc == 0 && !p.err[0];
    if (!ok) {
        char why[256];
        if (rc > 0 && line_problem(text, rc, why, sizeof why))
            snprintf(err, errlen, "%s:%d: %s", name, rc, why);
        else if (rc > 0)
            snprintf(err, errlen, "%s:%d: %s", name, rc, p.err[0] ? p.err : "syntax error; use key = value or [section]");
        else
            snprintf(err, errlen, "%s: %s", name, p.err[0] ? p.err : "cannot parse");
    }
    ok = ok && bt_ini_check_routes(&p, err, errlen) && check_budgets(c, name, err, errlen);
    bt_ini_parse_ctx_free(&p);
    if (ok)
        bt_config_finish(c);
    return ok;
}

