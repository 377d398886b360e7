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
#include "collectors/http.h"
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

/* ---- hints file ------------------------------------------------------------ */

static bool hint_line(void *arg, char *pat, char *disp, const char *name, int lineno, char *err,
                      size_t errlen)
{
    struct bt_quota_hints *h = arg;
    if (!*pat || !*disp || strlen(pat) >= sizeof h->h->pattern || strlen(disp) >= sizeof h->h->name) {
        snprintf(err, errlen, "%s:%d: empty or overlong pattern or name", name, lineno);
        return false;
    }
    h->h = bt_xrealloc(h->h, (size_t)(h->n + 1) * sizeof *h->h);
    bt_strlcpy(h->h[h->n].pattern, pat, sizeof h->h[h->n].pattern);
    bt_strlcpy(h->h[h->n].name, disp, sizeof h->h[h->n].name);
    h->n++;
    return true;
}

bool bt_quota_hints_parse(struct bt_quota_hints *h, const char *text, const char *name,
                          char *err, size_t errlen)
{
    return bt_parse_kv_lines(text, name, "model-pattern = quota display name", hint_line, h, err,
                             errlen);
}


bool bt_quota_hints_load_default(struct bt_quota_hints *h, char *err, size_t errlen)
{
    char path[1200];
    if (!bt_data_path("quota-names.conf", path, sizeof path)) {
        snprintf(err, errlen, "quota-names.conf not found (set BEDTOP_DATADIR)");
        return false;
    }
    return bt_parse_kv_file(path, "model-pattern = quota display name", hint_line, h, err, errlen);
}

void bt_quota_hints_free(struct bt_quota_hints *h)
{
    free(h->h);
    memset(h, 0, sizeof *h);
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
                             const struct bt_quota_hints *hints)
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

/* Matches a quota-name prefix case-insensitively, '-' standing for a blank
 * and blank runs counting once; returns what follows, or NULL. */
static const char *prefix_match(const char *s, const char *pat)
{
    while (*pat) {
        if (*pat == ' ') {
            if (*s != ' ' && *s != '-')
                return NULL;
            while (*s == ' ' || *s == '-')
                s++;
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

bool bt_quotas_parse_name(const char *quota_name, enum bt_quota_kind *kind,
                          enum bt_inference *inf, bool *any_inference, char *model, size_t n)
{
    static const struct {
        const char *prefix;
        enum bt_quota_kind kind;
        enum bt_inference inf;
        bool any;
    } forms[] = {
        {"on demand model inference tokens per minute for ", BT_Q_TPM, BT_INF_ON_DEMAND, false},
        {"on demand invokemodel tokens per minute for ", BT_Q_TPM, BT_INF_ON_DEMAND, false},
        {"cross region model inference tokens per minute for ", BT_Q_TPM, BT_INF_CROSS_REGION,
         false},
        {"global cross region model inference tokens per minute for ", BT_Q_TPM, BT_INF_GLOBAL,
         false},
        {"on demand model inference requests per minute for ", BT_Q_RPM, BT_INF_ON_DEMAND, false},
        {"on demand invokemodel requests per minute for ", BT_Q_RPM, BT_INF_ON_DEMAND, false},
        {"cross region model inference requests per minute for ", BT_Q_RPM, BT_INF_CROSS_REGION,
         false},
        {"global cross region model inference requests per minute for ", BT_Q_RPM, BT_INF_GLOBAL,
         false},
        {"model invocation max tokens per day for ", BT_Q_TPD, BT_INF_ON_DEMAND, true},
    };
    for (size_t i = 0; i < BT_ARRAY_LEN(forms); i++) {
        const char *rest = prefix_match(quota_name, forms[i].prefix);
        if (!rest)
            continue;
        char buf[256];
        bt_strlcpy(buf, rest, sizeof buf);
        /* "(doubled for cross-region calls)" describes the quota, not the model */
        char *paren = strrchr(buf, '(');
        if (paren && strstr(paren, "doubled"))
            *paren = '\0';
        char *x = bt_trim(buf);
        if (!*x)
            return false;
        *kind = forms[i].kind;
        *inf = forms[i].inf;
        *any_inference = forms[i].any;
        bt_strlcpy(model, x, n);
        return true;
    }
    return false;
}

int bt_quotas_match(const struct bt_route *r, enum bt_quota_kind k, const struct bt_sq_list *l,
                    const struct bt_quota_hints *hints)
{
    if (r->endpoint != BT_EP_RUNTIME)
        return -1; /* mantle quotas come from config */
    if (k == BT_Q_TPM && r->quota_code[0]) {
        for (int i = 0; i < l->n; i++)
            if (strcmp(l->q[i].code, r->quota_code) == 0)
                return i;
        return -1;
    }
    int found = -1;
    for (int i = 0; i < l->n; i++) {
        enum bt_quota_kind qk;
        enum bt_inference qi;
        bool any;
        char model[256];
        if (!bt_quotas_parse_name(l->q[i].name, &qk, &qi, &any, model, sizeof model))
            continue;
        if (qk != k || (!any && qi != r->inference))
            continue;
        if (!bt_quotas_model_matches(r->model, model, hints))
            continue;
        if (found >= 0 && l->q[found].value != l->q[i].value)
            return -1; /* two different answers: unknown beats a wrong guess */
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
 * Per (profile, Region) group of runtime routes: ListServiceQuotas pages
 * until no NextToken, match, emit; then, only if a route still has no TPM
 * quota, ListAWSDefaultServiceQuotas the same way for the published
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
    bool *need_tpm;          /* per route of the group */
};

struct sq {
    struct bt_ctx *ctx;
    struct bt_awsgroups ag;
    struct sq_group *g;
    int ng;
    struct bt_quota_hints hints;
    int64_t next;
    bool started, failed;
    unsigned long requests;
};

static void sq_event(struct sq *sq, const struct bt_event *ev)
{
    if (sq->ctx->store)
        bt_model_event(sq->ctx->store, sq->ctx->cfg->routes, ev);
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

/* Emits what the list says for route r; true if a TPM quota was found. */
static bool emit_route(struct sq_group *g, int r, enum bt_quota_source src, bool only_missing,
                       const bool *had)
{
    const struct bt_route *rt = &g->sq->ctx->cfg->routes[r];
    static const enum bt_quota_kind kinds[] = {BT_Q_TPM, BT_Q_RPM, BT_Q_TPD};
    bool tpm = false;
    for (size_t k = 0; k < BT_ARRAY_LEN(kinds); k++) {
        if (only_missing && had[k])
            continue;
        int i = bt_quotas_match(rt, kinds[k], &g->list, &g->sq->hints);
        if (i < 0)
            continue;
        struct bt_event ev = {.t = (int64_t)time(NULL), .type = BT_EV_QUOTA, .route = r,
                              .source = BT_SRC_QUOTAS, .quota_kind = kinds[k],
                              .value = bt_quotas_effective_value(rt, kinds[k], &g->list.q[i]),
                              .quota_source = src};
        bt_strlcpy(ev.code, g->list.q[i].code, sizeof ev.code);
        bt_strlcpy(ev.text, g->list.q[i].name, sizeof ev.text);
        sq_event(g->sq, &ev);
        if (kinds[k] == BT_Q_TPM)
            tpm = true;
    }
    return tpm;
}

static void sq_submit(struct sq_group *g);

static void group_end(struct sq_group *g, const char *error)
{
    free(g->token);
    g->token = NULL;
    bt_sq_list_free(&g->list);
    g->busy = false;
    g->defaults = false;
    if (error) {
        g->sq->failed = true;
        sq_status(g, BT_EV_ERROR, error);
    } else {
        sq_status(g, BT_EV_OK, NULL);
    }
}

static void listing_complete(struct sq_group *g)
{
    const struct bt_route *routes = g->sq->ctx->cfg->routes;
    if (!g->defaults) {
        bool any = false;
        for (int i = 0; i < g->ag->nroutes; i++) {
            int r = g->ag->routes[i];
            bool tpm = emit_route(g, r, BT_QS_SERVICE_QUOTAS, false, NULL);
            g->need_tpm[i] = !tpm && routes[r].quota[BT_Q_TPM].source != BT_QS_CONFIG;
            any = any || g->need_tpm[i];
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
        g->pages = 0;
        sq_submit(g);
        return;
    }
    for (int i = 0; i < g->ag->nroutes; i++) {
        int r = g->ag->routes[i];
        if (!g->need_tpm[i])
            continue;
        bool had[3];
        for (int k = 0; k < 3; k++)
            had[k] = !isnan(routes[r].quota[k].value) &&
                     routes[r].quota[k].source != BT_QS_DEFAULT;
        emit_route(g, r, BT_QS_DEFAULT, true, had);
    }
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

static void *sq_create(struct bt_ctx *ctx)
{
    int nruntime = 0;
    for (int i = 0; i < ctx->cfg->nroutes; i++)
        nruntime += ctx->cfg->routes[i].endpoint == BT_EP_RUNTIME;
    if (!ctx->http || nruntime == 0)
        return NULL;
    struct sq *sq = bt_xcalloc(1, sizeof *sq);
    sq->ctx = ctx;
    char err[512];
    if (!bt_quota_hints_load_default(&sq->hints, err, sizeof err) && ctx->verbose)
        bt_err("quota-name hints: %s (names are still matched from model IDs)", err);
    bt_awsgroups_build(&sq->ag, ctx, "servicequotas", true);
    sq->ng = sq->ag.n;
    sq->g = bt_xcalloc((size_t)(sq->ng ? sq->ng : 1), sizeof *sq->g);
    for (int i = 0; i < sq->ng; i++) {
        struct sq_group *g = &sq->g[i];
        g->sq = sq;
        g->ag = &sq->ag.g[i];
        g->need_tpm = bt_xcalloc((size_t)g->ag->nroutes, sizeof *g->need_tpm);
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
        g->pages = 0;
        sq_submit(g);
    }
    sq->next = now + BT_SQ_REFRESH;
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
        free(sq->g[i].need_tpm);
        bt_sq_list_free(&sq->g[i].list);
    }
    free(sq->g);
    bt_awsgroups_free(&sq->ag);
    bt_quota_hints_free(&sq->hints);
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
