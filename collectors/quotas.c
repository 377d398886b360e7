#include "collectors/quotas.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collectors/awsgroup.h"
#include "net/http.h"
#include "collectors/infprofile.h"
#include "core/burndown.h"
#include "core/json.h"

#define MAX_TOKEN_LEN 4096   /* bound on a NextToken we echo back */
#define MAX_QUOTAS 20000     /* bound on quotas kept from one listing */

void bt_sq_list_free(struct bt_sq_list *l)
{
    free(l->q);
    memset(l, 0, sizeof *l);
}

/* ---- request and response ------------------------------------------------ */

void bt_quotas_request_json(struct bt_buf *out, const char *next_token)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "ServiceCode", "bedrock");
    cJSON_AddNumberToObject(root, "MaxResults", 100);
    if (next_token && *next_token)
        cJSON_AddStringToObject(root, "NextToken", next_token);
    bt_buf_reset(out);
    bt_buf_json(out, root, false);
    cJSON_Delete(root);
}

bool bt_quotas_parse_page(const char *body, size_t len, struct bt_sq_list *l,
                          char **next_token, char *err, size_t errlen)
{
    *next_token = NULL;
    if (!body || !len) {
        snprintf(err, errlen, "empty response body");
        return false;
    }
    cJSON *root = cJSON_ParseWithLength(body, len);
    if (!cJSON_IsObject(root)) {
        snprintf(err, errlen, "malformed JSON response (%zu bytes)", len);
        cJSON_Delete(root);
        return false;
    }
    const cJSON *quotas = cJSON_GetObjectItemCaseSensitive(root, "Quotas");
    const cJSON *nt = cJSON_GetObjectItemCaseSensitive(root, "NextToken");
    if ((quotas && !cJSON_IsNull(quotas) && !cJSON_IsArray(quotas)) ||
        (nt && !cJSON_IsNull(nt) && !cJSON_IsString(nt))) {
        snprintf(err, errlen, "unexpected ListServiceQuotas response shape");
        cJSON_Delete(root);
        return false;
    }
    if (cJSON_IsString(nt) && strlen(nt->valuestring) > MAX_TOKEN_LEN) {
        snprintf(err, errlen, "NextToken longer than %d bytes", MAX_TOKEN_LEN);
        cJSON_Delete(root);
        return false;
    }
    const cJSON *q;
    const cJSON *arr = cJSON_IsArray(quotas) ? quotas : NULL;
    cJSON_ArrayForEach(q, arr) {
        const cJSON *code = cJSON_GetObjectItemCaseSensitive(q, "QuotaCode");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(q, "QuotaName");
        const cJSON *val = cJSON_GetObjectItemCaseSensitive(q, "Value");
        /* a quota without a value (ErrorReason) or with an oversized field
         * is skipped: truncating a name could make it match the wrong model */
        if (!cJSON_IsString(code) || !cJSON_IsString(name) || !cJSON_IsNumber(val) ||
            !isfinite(val->valuedouble) || val->valuedouble < 0 ||
            strlen(code->valuestring) >= sizeof l->q->code ||
            strlen(name->valuestring) >= sizeof l->q->name || l->n >= MAX_QUOTAS)
            continue;
        if (l->n == l->cap) {
            l->cap = l->cap ? l->cap * 2 : 64;
            l->q = bt_xrealloc(l->q, (size_t)l->cap * sizeof *l->q);
        }
        struct bt_sq_quota *e = &l->q[l->n++];
        bt_strlcpy(e->code, code->valuestring, sizeof e->code);
        bt_strlcpy(e->name, name->valuestring, sizeof e->name);
        e->value = val->valuedouble;
    }
    if (cJSON_IsString(nt) && nt->valuestring[0])
        *next_token = bt_xstrdup(nt->valuestring);
    cJSON_Delete(root);
    return true;
}

/* ---- quota-names.conf: rows and hints ------------------------------------ */

static bool table_row(struct bt_quota_table *t, char *key, char *val, const char *name,
                      int lineno, char *err, size_t errlen)
{
    char *m = strstr(key, "{model}");
    struct bt_quota_row row;
    memset(&row, 0, sizeof row);
    row.line = lineno;
    *m = '\0';
    const char *suffix = bt_trim(m + 7);
    if (strstr(suffix, "{model}") || strlen(key) >= sizeof row.prefix ||
        strlen(suffix) >= sizeof row.suffix || !*key) {
        snprintf(err, errlen, "%s:%d: a quota name needs text, then one {model}", name, lineno);
        return false;
    }
    /* the prefix keeps its blank before {model}; both compare as lower case */
    for (size_t i = 0; key[i]; i++)
        row.prefix[i] = (char)tolower((unsigned char)key[i]);
    for (size_t i = 0; suffix[i]; i++)
        row.suffix[i] = (char)tolower((unsigned char)suffix[i]);
    char *save = NULL;
    const char *kind = strtok_r(val, " \t", &save), *inf = strtok_r(NULL, " \t", &save);
    const char *extra = strtok_r(NULL, " \t", &save);
    int k = -1;
    for (int i = 0; kind && i < BT_Q_COUNT; i++)
        if (!strcmp(kind, bt_quota_kind_name((enum bt_quota_kind)i)))
            k = i;
    row.inference = !inf ? -2
                    : !strcmp(inf, "any") ? -1
                    : !strcmp(inf, "on-demand") ? BT_INF_ON_DEMAND
                    : !strcmp(inf, "cross-region") ? BT_INF_CROSS_REGION
                    : !strcmp(inf, "global") ? BT_INF_GLOBAL : -2;
    if (k < 0 || row.inference == -2 || (extra && strncmp(extra, "context=", 8) != 0) ||
        (extra && (!extra[8] || strlen(extra + 8) >= sizeof row.context)) ||
        strtok_r(NULL, " \t", &save)) {
        snprintf(err, errlen,
                 "%s:%d: expected '<kind> <inference> [context=<label>]' (kind tpm, tpd, rpm, "
                 "input_tpm or output_tpm; inference on-demand, cross-region, global or any)",
                 name, lineno);
        return false;
    }
    row.kind = (enum bt_quota_kind)k;
    if (extra)
        bt_strlcpy(row.context, extra + 8, sizeof row.context);
    t->rows = bt_xrealloc(t->rows, (size_t)(t->nrows + 1) * sizeof *t->rows);
    t->rows[t->nrows++] = row;
    return true;
}

static bool table_line(void *arg, char *key, char *val, const char *name, int lineno, char *err,
                       size_t errlen)
{
    struct bt_quota_table *t = arg;
    if (strstr(key, "{model}"))
        return table_row(t, key, val, name, lineno, err, errlen);
    if (!*key || !*val || strlen(key) >= sizeof t->h->pattern || strlen(val) >= sizeof t->h->name) {
        snprintf(err, errlen, "%s:%d: empty or overlong pattern or name", name, lineno);
        return false;
    }
    t->h = bt_xrealloc(t->h, (size_t)(t->n + 1) * sizeof *t->h);
    bt_strlcpy(t->h[t->n].pattern, key, sizeof t->h[t->n].pattern);
    bt_strlcpy(t->h[t->n].name, val, sizeof t->h[t->n].name);
    t->n++;
    return true;
}

#define TABLE_EXPECT "quota name with {model} = kind inference, or model-pattern = quota display name"

bool bt_quota_table_parse(struct bt_quota_table *t, const char *text, const char *name,
                          char *err, size_t errlen)
{
    return bt_parse_kv_lines(text, name, TABLE_EXPECT, table_line, t, err, errlen);
}

bool bt_quota_table_load_default(struct bt_quota_table *t, char *err, size_t errlen)
{
    char path[1200];
    if (!bt_data_path("quota-names.conf", path, sizeof path)) {
        snprintf(err, errlen, "quota-names.conf not found (set BEDTOP_DATADIR)");
        return false;
    }
    return bt_parse_kv_file(path, TABLE_EXPECT, table_line, t, err, errlen);
}

void bt_quota_table_free(struct bt_quota_table *t)
{
    free(t->h);
    free(t->rows);
    memset(t, 0, sizeof *t);
}

/* ---- name matching ----------------------------------------------------------
 * Both sides become a token sequence: lower case, split at anything not a
 * letter or digit and between letters and digits ("llama3" -> llama 3), '+'
 * kept as "plus" (Command R+ is not Command R). Runs of number tokens are
 * joined so "3.5", "3-5" and "24.07"/"2407" compare equal. A trailing "v N"
 * is the version (absent = 1). Model IDs also lose the inference-profile
 * prefix, the vendor ("anthropic."), the ":0" suffix and a yyyymmdd date. */

#define MAX_TOK 24
struct toks {
    char t[MAX_TOK][32];
    int n;
    long version;
    bool overflow;
};

static bool all_digits(const char *s)
{
    return *s && strspn(s, "0123456789") == strlen(s);
}

static void tok_push(struct toks *tk, const char *s, size_t len)
{
    if (tk->n >= MAX_TOK || len >= sizeof tk->t[0]) {
        tk->overflow = true;
        return;
    }
    for (size_t i = 0; i < len; i++)
        tk->t[tk->n][i] = (char)tolower((unsigned char)s[i]);
    tk->t[tk->n][len] = '\0';
    tk->n++;
}

static void tokenize(const char *s, struct toks *tk)
{
    memset(tk, 0, sizeof *tk);
    while (*s) {
        unsigned char c = (unsigned char)*s;
        if (c == '+') {
            tok_push(tk, "plus", 4);
            s++;
        } else if (isalpha(c)) {
            const char *b = s;
            while (isalpha((unsigned char)*s))
                s++;
            tok_push(tk, b, (size_t)(s - b));
        } else if (isdigit(c)) {
            const char *b = s;
            while (isdigit((unsigned char)*s))
                s++;
            tok_push(tk, b, (size_t)(s - b));
        } else {
            s++;
        }
    }
}

static void tok_remove(struct toks *tk, int i)
{
    memmove(tk->t[i], tk->t[i + 1], (size_t)(tk->n - i - 1) * sizeof tk->t[0]);
    tk->n--;
}

/* Takes the trailing "v N" as the version and joins number runs. */
static void tok_finish(struct toks *tk)
{
    tk->version = 1;
    if (tk->n >= 2 && strcmp(tk->t[tk->n - 2], "v") == 0 && all_digits(tk->t[tk->n - 1]) &&
        strlen(tk->t[tk->n - 1]) < 4) {
        tk->version = strtol(tk->t[tk->n - 1], NULL, 10);
        tk->n -= 2;
    }
    for (int i = 0; i + 1 < tk->n;) {
        size_t a = strlen(tk->t[i]), b = strlen(tk->t[i + 1]);
        if (all_digits(tk->t[i]) && all_digits(tk->t[i + 1])) {
            if (a + b >= sizeof tk->t[0]) {
                tk->overflow = true;
                return;
            }
            memcpy(tk->t[i] + a, tk->t[i + 1], b + 1);
            tok_remove(tk, i + 1);
        } else {
            i++;
        }
    }
}

static const char *strip_profile_prefix(const char *id)
{
    static const char *const pre[] = {"us.", "eu.", "apac.", "jp.", "au.", "global.",
                                      "us-gov.", "ca."};
    for (size_t i = 0; i < BT_ARRAY_LEN(pre); i++)
        if (strncmp(id, pre[i], strlen(pre[i])) == 0)
            return id + strlen(pre[i]);
    return id;
}

/* Model ID -> vendor tokens and model tokens. */
static void model_tokens(const char *model_id, struct toks *vendor, struct toks *model)
{
    char id[192];
    bt_strlcpy(id, strip_profile_prefix(model_id), sizeof id);
    char *colon = strchr(id, ':');
    if (colon)
        *colon = '\0';
    char *dot = strchr(id, '.');
    const char *rest = id;
    if (dot) {
        *dot = '\0';
        rest = dot + 1;
        tokenize(id, vendor);
    } else {
        memset(vendor, 0, sizeof *vendor);
    }
    tokenize(rest, model);
    for (int i = 0; i < model->n;) {
        const char *t = model->t[i];
        if (strlen(t) == 8 && all_digits(t) && t[0] == '2' && t[1] == '0')
            tok_remove(model, i); /* release date, e.g. 20250929 */
        else
            i++;
    }
    tok_finish(model);
}

static bool tok_eq_from(const struct toks *a, int from, const struct toks *b)
{
    if (a->n - from != b->n)
        return false;
    for (int i = 0; i < b->n; i++)
        if (strcmp(a->t[from + i], b->t[i]) != 0)
            return false;
    return true;
}

/* Display tokens equal model tokens, with the vendor (optionally followed by
 * "ai" or "labs") allowed in front. */
static bool display_equals(const struct toks *disp, const struct toks *vendor,
                           const struct toks *model)
{
    if (disp->overflow || model->overflow || disp->version != model->version)
        return false;
    if (tok_eq_from(disp, 0, model))
        return true;
    if (vendor->n == 0 || disp->n < vendor->n)
        return false;
    for (int i = 0; i < vendor->n; i++)
        if (strcmp(disp->t[i], vendor->t[i]) != 0)
            return false;
    if (tok_eq_from(disp, vendor->n, model))
        return true;
    int k = vendor->n;
    return k < disp->n && (strcmp(disp->t[k], "ai") == 0 || strcmp(disp->t[k], "labs") == 0) &&
           tok_eq_from(disp, k + 1, model);
}

bool bt_quotas_model_matches(const char *model_id, const char *display,
                             const struct bt_quota_table *hints)
{
    struct toks d;
    tokenize(display, &d);
    tok_finish(&d);
    const char *bare = strip_profile_prefix(model_id);
    bool hinted = false;
    for (int i = 0; hints && i < hints->n; i++) {
        if (fnmatch(hints->h[i].pattern, bare, 0) != 0)
            continue;
        hinted = true;
        struct toks h, none;
        tokenize(hints->h[i].name, &h);
        tok_finish(&h);
        memset(&none, 0, sizeof none);
        if (display_equals(&d, &none, &h))
            return true;
    }
    if (hinted)
        return false;
    struct toks vendor, model;
    model_tokens(model_id, &vendor, &model);
    if (model.n == 0)
        return false;
    return display_equals(&d, &vendor, &model);
}

/* Compares quota-name text to a row's lower-case literal: case-insensitive,
 * '-' standing for a blank and blank runs counting once. Returns the end of
 * the match in s, or NULL. */
static const char *literal_match(const char *s, const char *pat)
{
    while (*pat) {
        if (*pat == ' ' || *pat == '-') {
            if (*s != ' ' && *s != '-')
                return NULL;
            while (*s == ' ' || *s == '-')
                s++;
            while (*pat == ' ' || *pat == '-')
                pat++;
            continue;
        }
        if (tolower((unsigned char)*s) != *pat)
            return NULL;
        s++;
        pat++;
    }
    return s;
}

/* The row's reading of name, or false. The model is what {model} covers. */
static bool row_reads(const struct bt_quota_row *row, const char *name, struct bt_qname *out)
{
    const char *rest = literal_match(name, row->prefix);
    if (!rest)
        return false;
    char model[256];
    if (strlen(rest) >= sizeof model)
        return false;
    bt_strlcpy(model, rest, sizeof model);
    char *m = bt_trim(model);
    if (row->suffix[0]) {
        /* the suffix must end the name: try it at each blank from the right */
        bool found = false;
        for (char *p = m + strlen(m); p > m; p--) {
            if (p[-1] != ' ')
                continue;
            const char *e = literal_match(p, row->suffix);
            if (e && strspn(e, " ") == strlen(e)) {
                p[-1] = '\0';
                found = true;
                break;
            }
        }
        if (!found)
            return false;
        m = bt_trim(m);
    }
    if (!*m)
        return false;
    out->kind = row->kind;
    out->inference = row->inference;
    bt_strlcpy(out->context, row->context, sizeof out->context);
    bt_strlcpy(out->model, m, sizeof out->model);
    out->line = row->line;
    return true;
}

int bt_quotas_parse_name(const struct bt_quota_table *t, const char *quota_name,
                         struct bt_qname out[2])
{
    int best = -1, tie = -1;
    size_t weight = 0;
    struct bt_qname cand;
    for (int i = 0; t && i < t->nrows; i++) {
        if (!row_reads(&t->rows[i], quota_name, &cand))
            continue;
        size_t w = strlen(t->rows[i].prefix) + strlen(t->rows[i].suffix);
        if (best >= 0 && w < weight)
            continue;
        bool same = best >= 0 && cand.kind == out[0].kind && cand.inference == out[0].inference &&
                    !strcmp(cand.context, out[0].context) && !strcmp(cand.model, out[0].model);
        if (best >= 0 && w == weight) {
            if (!same && tie < 0) {
                out[1] = cand;
                tie = i;
            }
            continue;
        }
        out[0] = cand;
        best = i;
        tie = -1;
        weight = w;
    }
    return best < 0 ? 0 : tie < 0 ? 1 : 2;
}

const char *bt_quotas_route_model(const struct bt_route *r)
{
    return r->base_model[0] ? r->base_model : r->model;
}

/* Does this reading name route r's quota of kind k? */
static bool reading_fits(const struct bt_qname *q, const struct bt_route *r,
                         enum bt_quota_kind k, const struct bt_quota_table *t)
{
    bool mantle_kind = q->kind == BT_Q_INPUT_TPM || q->kind == BT_Q_OUTPUT_TPM;
    if (q->kind != k || mantle_kind != (r->endpoint == BT_EP_MANTLE))
        return false;
    if (q->inference >= 0 && q->inference != (int)r->inference)
        return false;
    if (strcmp(q->context, r->context) != 0)
        return false;
    return bt_quotas_model_matches(bt_quotas_route_model(r), q->model, t);
}

int bt_quotas_match(const struct bt_route *r, enum bt_quota_kind k, const struct bt_sq_list *l,
                    const struct bt_quota_table *t, char *why, size_t whylen)
{
    if (why && whylen)
        why[0] = '\0';
    if (k == BT_Q_TPM && r->quota_code[0]) {
        for (int i = 0; i < l->n; i++)
            if (strcmp(l->q[i].code, r->quota_code) == 0)
                return i;
        return -1;
    }
    int found = -1;
    for (int i = 0; i < l->n; i++) {
        struct bt_qname q[2];
        int n = bt_quotas_parse_name(t, l->q[i].name, q);
        if (n == 0)
            continue;
        bool fits = reading_fits(&q[0], r, k, t);
        if (n == 2 && (fits || reading_fits(&q[1], r, k, t))) {
            if (why)
                snprintf(why, whylen,
                         "quota %s \"%.120s\" reads two ways (quota-names.conf lines %d and %d)",
                         l->q[i].code, l->q[i].name, q[0].line, q[1].line);
            return -2;
        }
        if (!fits)
            continue;
        if (found >= 0 && l->q[found].value != l->q[i].value) {
            /* two different answers: unknown beats a wrong guess */
            if (why)
                snprintf(why, whylen, "two quotas name this model: %s (%g) and %s (%g)",
                         l->q[found].code, l->q[found].value, l->q[i].code, l->q[i].value);
            return -2;
        }
        if (found < 0)
            found = i;
    }
    return found;
}

double bt_quotas_effective_value(const struct bt_route *r, enum bt_quota_kind k,
                                 const struct bt_sq_quota *q)
{
    /* the daily quota's own name says it is doubled for cross-region calls */
    if (k == BT_Q_TPD && r->inference != BT_INF_ON_DEMAND)
        return q->value * 2;
    return q->value;
}

/* ---- the collector -------------------------------------------------------
 * Per (profile, Region) group of routes: GetInferenceProfile for each
 * application-inference-profile route not resolved in the last 6 hours (its base
 * model and inference type), alongside ListServiceQuotas pages until no
 * NextToken; when both are in, match and emit; then, only if a route still has
 * no quota, ListAWSDefaultServiceQuotas the same way for the published
 * defaults. Every 6 hours (5 minutes after a failure); once in check mode. */

#define SQ_TARGET "ServiceQuotasV20190624."
#define SQ_CTYPE "application/x-amz-json-1.1"
#define SQ_RETRY 300
#define SQ_MAX_PAGES 500

struct sq;

struct sq_group {
    struct sq *sq;
    struct bt_awsgroup *ag;
    char label[96];          /* "quotas us-east-1" */
    struct bt_sq_list list;
    char *token;
    int pages;
    bool busy, defaults;     /* defaults: the fallback listing is running */
    bool listed;             /* the account listing is complete */
    int profiles_out;        /* GetInferenceProfile requests not answered yet */
    bool *need;              /* per route of the group: still without a quota */
};

/* Per route: the GetInferenceProfile answer (application inference profiles). */
struct sq_profile {
    struct sq_group *g;
    int route;
    int64_t resolved_at;     /* 0: never */
    char error[224];         /* why the last lookup failed, "" none */
};

struct sq {
    struct bt_ctx *ctx;
    struct bt_awsgroups ag;
    struct sq_group *g;
    int ng;
    struct bt_quota_table table;
    char table_error[256];
    struct sq_profile *prof; /* per route */
    int64_t next;
    bool started, failed;
    unsigned long requests;
};

static void sq_event(struct sq *sq, const struct bt_event *ev)
{
    if (sq->ctx->store)
        bt_store_apply(sq->ctx->store, ev);
}

static void sq_status(struct sq_group *g, enum bt_event_type type, const char *text)
{
    for (int i = 0; i < g->ag->nroutes; i++) {
        struct bt_event ev = {.t = (int64_t)time(NULL), .type = type, .route = g->ag->routes[i],
                              .source = BT_SRC_QUOTAS};
        bt_strlcpy(ev.text, text ? text : "", sizeof ev.text);
        sq_event(g->sq, &ev);
    }
}

/* Why route r has no quota of kind k: kept as the quota's name while it is unknown. */
static void quota_unknown(struct sq *sq, int r, enum bt_quota_kind k, const char *why)
{
    struct bt_event ev = {.t = (int64_t)time(NULL), .type = BT_EV_QUOTA, .route = r,
                          .source = BT_SRC_QUOTAS, .quota_kind = k, .value = NAN,
                          .quota_source = BT_QS_UNKNOWN};
    bt_strlcpy(ev.text, why, sizeof ev.text);
    sq_event(sq, &ev);
}

static bool route_kinds(const struct bt_route *rt, const enum bt_quota_kind **kinds, size_t *n)
{
    static const enum bt_quota_kind runtime[] = {BT_Q_TPM, BT_Q_RPM, BT_Q_TPD};
    static const enum bt_quota_kind mantle[] = {BT_Q_INPUT_TPM, BT_Q_OUTPUT_TPM};
    *kinds = rt->endpoint == BT_EP_MANTLE ? mantle : runtime;
    *n = rt->endpoint == BT_EP_MANTLE ? BT_ARRAY_LEN(mantle) : BT_ARRAY_LEN(runtime);
    return true;
}

/* The quotas that bind a route (TPM; mantle: input and output): does it have
 * them all, from the account or config? */
static bool has_binding_quotas(const struct bt_route *rt, bool defaults_ok)
{
    enum bt_quota_kind a = rt->endpoint == BT_EP_MANTLE ? BT_Q_INPUT_TPM : BT_Q_TPM;
    enum bt_quota_kind b = rt->endpoint == BT_EP_MANTLE ? BT_Q_OUTPUT_TPM : BT_Q_TPM;
    const struct bt_quota *qa = &rt->quota[a], *qb = &rt->quota[b];
    return !isnan(qa->value) && !isnan(qb->value) &&
           (defaults_ok || (qa->source != BT_QS_DEFAULT && qb->source != BT_QS_DEFAULT));
}

/* An application-profile route whose model is not known (the lookup failed and
 * no earlier answer is cached): no quota name can be matched. */
static bool profile_unresolved(const struct sq *sq, int r)
{
    return sq->prof[r].error[0] && !sq->ctx->cfg->routes[r].base_model[0];
}

/* Emits what the list says for route r (only kinds it lacks when only_missing). */
static void emit_route(struct sq_group *g, int r, enum bt_quota_source src, bool only_missing)
{
    struct sq *sq = g->sq;
    const struct bt_route *rt = &sq->ctx->cfg->routes[r];
    const enum bt_quota_kind *kinds;
    size_t nk;
    route_kinds(rt, &kinds, &nk);
    if (profile_unresolved(sq, r)) {
        /* the profile's model is not known: no name can be matched */
        quota_unknown(sq, r, kinds[0], sq->prof[r].error);
        return;
    }
    int rpm = -1;
    bool tpm = false;
    for (size_t k = 0; k < nk; k++) {
        const struct bt_quota *have = &rt->quota[kinds[k]];
        if (only_missing && !isnan(have->value) && have->source != BT_QS_DEFAULT)
            continue;
        char why[224];
        int i = bt_quotas_match(rt, kinds[k], &g->list, &sq->table, why, sizeof why);
        if (i == -2) {
            quota_unknown(sq, r, kinds[k], why);
            continue;
        }
        if (i < 0)
            continue;
        tpm = tpm || kinds[k] == BT_Q_TPM;
        if (kinds[k] == BT_Q_RPM)
            rpm = i;
        struct bt_event ev = {.t = (int64_t)time(NULL), .type = BT_EV_QUOTA, .route = r,
                              .source = BT_SRC_QUOTAS, .quota_kind = kinds[k],
                              .value = bt_quotas_effective_value(rt, kinds[k], &g->list.q[i]),
                              .quota_source = src};
        bt_strlcpy(ev.code, g->list.q[i].code, sizeof ev.code);
        bt_strlcpy(ev.text, g->list.q[i].name, sizeof ev.text);
        sq_event(sq, &ev);
    }
    if (!tpm && rt->endpoint == BT_EP_RUNTIME && rt->context[0] && !rt->quota_code[0]) {
        char why[224];
        snprintf(why, sizeof why,
                 "%s lists no %s-context tokens-per-minute quota for this model (context = %s)",
                 src == BT_QS_DEFAULT ? "AWS's defaults list" : "the account", rt->context,
                 rt->context);
        quota_unknown(sq, r, BT_Q_TPM, why);
    } else if (rpm >= 0 && !tpm) {
        char why[224];
        snprintf(why, sizeof why,
                 "%s lists only a requests-per-minute quota for this model (%s = %g), not enforced "
                 "since 2026-05-27",
                 src == BT_QS_DEFAULT ? "AWS's defaults list" : "the account", g->list.q[rpm].code,
                 g->list.q[rpm].value);
        quota_unknown(sq, r, BT_Q_TPM, why);
    }
}

static void sq_submit(struct sq_group *g);

static void group_end(struct sq_group *g, const char *error)
{
    free(g->token);
    g->token = NULL;
    bt_sq_list_free(&g->list);
    g->busy = false;
    g->defaults = false;
    g->listed = false;
    if (error) {
        g->sq->failed = true;
        sq_status(g, BT_EV_ERROR, error);
    } else {
        sq_status(g, BT_EV_OK, NULL);
    }
}

/* Both the listing and the profile lookups are in: match. */
static void listing_complete(struct sq_group *g)
{
    struct sq *sq = g->sq;
    const struct bt_route *routes = sq->ctx->cfg->routes;
    if (!g->listed || g->profiles_out > 0)
        return;
    if (!g->defaults) {
        bool any = false;
        for (int i = 0; i < g->ag->nroutes; i++) {
            int r = g->ag->routes[i];
            emit_route(g, r, BT_QS_SERVICE_QUOTAS, false);
            g->need[i] = !profile_unresolved(sq, r) && !has_binding_quotas(&routes[r], false);
            any = any || g->need[i];
        }
        if (!any) {
            group_end(g, NULL);
            return;
        }
        /* the published defaults, for routes the account list did not cover */
        bt_sq_list_free(&g->list);
        free(g->token);
        g->token = NULL;
        g->defaults = true;
        g->listed = false;
        g->pages = 0;
        sq_submit(g);
        return;
    }
    for (int i = 0; i < g->ag->nroutes; i++)
        if (g->need[i])
            emit_route(g, g->ag->routes[i], BT_QS_DEFAULT, true);
    group_end(g, NULL);
}

static void sq_done(void *arg, const struct bt_http_resp *resp)
{
    struct sq_group *g = arg;
    const char *op = g->defaults ? "ListAWSDefaultServiceQuotas" : "ListServiceQuotas";
    char why[224], text[224];
    if (resp->status != 200) {
        bt_awsgroup_describe(resp, why, sizeof why);
        snprintf(text, sizeof text, "%s: %s: %s", g->label, op, why);
        group_end(g, text);
        return;
    }
    char *token = NULL;
    char err[160];
    if (!bt_quotas_parse_page(resp->body, resp->body_len, &g->list, &token, err, sizeof err)) {
        snprintf(text, sizeof text, "%s: %s: %s (%s)", g->label, op, err,
                 resp->url ? resp->url : "");
        group_end(g, text);
        return;
    }
    if (!token) {
        g->listed = true;
        listing_complete(g);
        return;
    }
    /* pages may be short or empty and still carry a token: keep going */
    if (++g->pages >= SQ_MAX_PAGES || (g->token && strcmp(g->token, token) == 0)) {
        free(token);
        snprintf(text, sizeof text, "%s: %s pagination does not end", g->label, op);
        group_end(g, text);
        return;
    }
    free(g->token);
    g->token = token;
    sq_submit(g);
}

static void sq_submit(struct sq_group *g)
{
    struct sq *sq = g->sq;
    struct bt_buf body = {0};
    bt_quotas_request_json(&body, g->token);
    sq->requests++;
    bt_awsgroup_submit(&sq->ag, g->ag, sq->ctx->http, "servicequotas", SQ_TARGET, SQ_CTYPE,
                       g->label, g->defaults ? "ListAWSDefaultServiceQuotas" : "ListServiceQuotas",
                       &body, sq_done, g);
    bt_buf_free(&body);
}

/* --- GetInferenceProfile --- */

/* A resolved profile sets the route's base model, and with it the burndown and
 * (unless the config says) the inference type. */
static void profile_apply(struct sq *sq, int r, const struct bt_infprofile *ip, int64_t cached_at)
{
    const struct bt_config *cfg = sq->ctx->cfg;
    const struct bt_route *rt = &cfg->routes[r];
    char why[96], when[32] = "";
    if (cached_at)
        bt_fmt_iso(cached_at, when, sizeof when);
    snprintf(why, sizeof why, "application inference profile in %d Region%s; GetInferenceProfile%s%s",
             ip->nregions, ip->nregions == 1 ? "" : "s", cached_at ? " at " : "", when);
    /* typed settings, applied by the model, as a replay of the recording will */
    struct bt_event ev = {.t = (int64_t)time(NULL), .type = BT_EV_SETTING, .route = r,
                          .source = BT_SRC_QUOTAS, .setting = BT_SET_BASE_MODEL};
    bt_strlcpy(ev.str, ip->base_model, sizeof ev.str);
    bt_strlcpy(ev.text, why, sizeof ev.text);
    sq_event(sq, &ev);
    if (!rt->inference_set) {
        ev.setting = BT_SET_INFERENCE;
        bt_strlcpy(ev.str, bt_inference_name(ip->inference), sizeof ev.str);
        sq_event(sq, &ev);
    }
    if (strcmp(rt->burndown_source, "config") != 0 && rt->endpoint == BT_EP_RUNTIME) {
        bool matched;
        ev.setting = BT_SET_BURNDOWN;
        ev.value = bt_burndown_lookup(&cfg->burndown, ip->base_model, &matched);
        bt_strlcpy(ev.str, matched ? "table" : "default", sizeof ev.str);
        sq_event(sq, &ev);
    }
}

static void profile_done(void *arg, const struct bt_http_resp *resp)
{
    struct sq_profile *p = arg;
    struct sq_group *g = p->g;
    struct sq *sq = g->sq;
    char why[200];
    struct bt_infprofile ip;
    if (resp->status != 200) {
        bt_awsgroup_describe(resp, why, sizeof why);
        snprintf(p->error, sizeof p->error,
                 "GetInferenceProfile failed: %s; set base_model or allow bedrock:GetInferenceProfile",
                 why);
    } else if (!bt_infprofile_parse(resp->body, resp->body_len, &ip, why, sizeof why)) {
        snprintf(p->error, sizeof p->error, "GetInferenceProfile: %s; set base_model", why);
    } else {
        p->error[0] = '\0';
        p->resolved_at = g->sq->next - BT_SQ_REFRESH;
        profile_apply(sq, p->route, &ip, 0);
        bt_infprofile_cache_put(sq->ctx->cfg->routes[p->route].model, &ip, p->resolved_at);
    }
    if (p->error[0])
        sq->failed = true;
    g->profiles_out--;
    listing_complete(g);
}

static void profile_submit(struct sq_group *g, int r)
{
    struct sq *sq = g->sq;
    struct sq_profile *p = &sq->prof[r];
    const struct bt_route *rt = &sq->ctx->cfg->routes[r];
    char region[32], url[1024], path[640], base[512], label[160];
    bt_infprofile_arn_region(rt->model, region, sizeof region);
    if (!region[0])
        bt_strlcpy(region, g->ag->region, sizeof region);
    struct bt_aws_profile_opts o = sq->ag.prov[g->ag->provider].opts;
    o.region = region;
    if (bt_aws_endpoint(&o, "bedrock", region, base, sizeof base) != 0) {
        snprintf(p->error, sizeof p->error, "GetInferenceProfile: no bedrock endpoint for Region %s",
                 region);
        return;
    }
    bt_infprofile_path(rt->model, path, sizeof path);
    snprintf(url, sizeof url, "%s%s", base, path);
    snprintf(label, sizeof label, "bedrock %s GetInferenceProfile", region);
    struct bt_http_req req = {
        .policy = &bt_aws_policy,
        .method = "GET", .url = url, .service = "bedrock", .region = region,
        .creds = &sq->ag.prov[g->ag->provider].p, .label = label,
        .timeout = bt_awsgroup_timeout(),
    };
    p->g = g;
    p->route = r;
    g->profiles_out++;
    sq->requests++;
    bt_http_submit(sq->ctx->http, &req, profile_done, p);
}

/* Application-profile routes of the group whose answer is missing or old. */
static void profiles_start(struct sq_group *g, int64_t now)
{
    struct sq *sq = g->sq;
    for (int i = 0; i < g->ag->nroutes; i++) {
        int r = g->ag->routes[i];
        const struct bt_route *rt = &sq->ctx->cfg->routes[r];
        struct sq_profile *p = &sq->prof[r];
        if (!bt_infprofile_is_arn(rt->model) || (rt->base_model[0] && !p->resolved_at))
            continue; /* not a profile, or base_model from the config */
        if (p->resolved_at && now - p->resolved_at < BT_INFPROFILE_REFRESH)
            continue;
        p->error[0] = '\0';
        struct bt_infprofile ip;
        int64_t at;
        if (!p->resolved_at && bt_infprofile_cache_get(rt->model, now, &ip, &at)) {
            /* resolved by an earlier run within the last hours */
            p->resolved_at = at;
            profile_apply(sq, r, &ip, at);
            continue;
        }
        profile_submit(g, r);
    }
}

static void *sq_create(struct bt_ctx *ctx)
{
    if (!ctx->http || ctx->cfg->nroutes == 0)
        return NULL;
    struct sq *sq = bt_xcalloc(1, sizeof *sq);
    sq->ctx = ctx;
    if (!bt_quota_table_load_default(&sq->table, sq->table_error, sizeof sq->table_error))
        bt_err("quota names: %s; quotas cannot be matched by name (set quota_code or quota_tpm)",
               sq->table_error);
    sq->prof = bt_xcalloc((size_t)ctx->cfg->nroutes, sizeof *sq->prof);
    bt_awsgroups_build(&sq->ag, ctx, "servicequotas", false);
    sq->ng = sq->ag.n;
    sq->g = bt_xcalloc((size_t)(sq->ng ? sq->ng : 1), sizeof *sq->g);
    for (int i = 0; i < sq->ng; i++) {
        struct sq_group *g = &sq->g[i];
        g->sq = sq;
        g->ag = &sq->ag.g[i];
        g->need = bt_xcalloc((size_t)g->ag->nroutes, sizeof *g->need);
        snprintf(g->label, sizeof g->label, "quotas %s",
                 g->ag->region[0] ? g->ag->region : "(no region)");
    }
    return sq;
}

static void sq_tick(void *self, int64_t now)
{
    struct sq *sq = self;
    if (sq->ctx->mode == BT_MODE_ONCE && sq->started)
        return;
    sq->started = true;
    sq->failed = false;
    sq->next = now + BT_SQ_REFRESH;
    for (int i = 0; i < sq->ng; i++) {
        struct sq_group *g = &sq->g[i];
        if (g->busy)
            continue;
        if (!g->ag->url[0]) {
            char text[224];
            snprintf(text, sizeof text, "%s: %s", g->label, g->ag->error);
            sq_status(g, BT_EV_ERROR, text);
            sq->failed = true;
            continue;
        }
        g->busy = true;
        g->defaults = false;
        g->listed = false;
        g->pages = 0;
        profiles_start(g, now);
        sq_submit(g);
    }
}

static int64_t sq_next_due(void *self)
{
    struct sq *sq = self;
    if (sq->ctx->mode == BT_MODE_ONCE)
        return sq->started ? INT64_MAX : 0;
    bool busy = false;
    for (int i = 0; i < sq->ng; i++)
        busy = busy || sq->g[i].busy;
    /* a failed listing is retried soon; the applied values rarely change */
    if (sq->failed && !busy)
        return sq->next - BT_SQ_REFRESH + SQ_RETRY;
    return sq->next;
}

static bool sq_busy(void *self)
{
    struct sq *sq = self;
    if (sq->ctx->mode == BT_MODE_ONCE && !sq->started)
        return true;
    for (int i = 0; i < sq->ng; i++)
        if (sq->g[i].busy)
            return true;
    return false;
}

static void sq_destroy(void *self)
{
    struct sq *sq = self;
    if (!sq)
        return;
    for (int i = 0; i < sq->ng; i++) {
        free(sq->g[i].token);
        free(sq->g[i].need);
        bt_sq_list_free(&sq->g[i].list);
    }
    free(sq->g);
    bt_awsgroups_free(&sq->ag);
    bt_quota_table_free(&sq->table);
    free(sq->prof);
    free(sq);
}

const struct bt_collector_ops bt_quotas_collector = {
    .name = "quotas",
    .create = sq_create,
    .tick = sq_tick,
    .next_due = sq_next_due,
    .busy = sq_busy,
    .destroy = sq_destroy,
};

unsigned long bt_quotas_requests(void *self)
{
    const struct sq *sq = self;
    return sq ? sq->requests : 0;
}
