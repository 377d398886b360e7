/* Quota names: data/quota-names.conf (rows and model-ID hints), the reading of a
 * quota name by those rows, and the comparison of a display name ("Anthropic
 * Claude Sonnet 4.5 V1") with a model ID on letters and digits. */
#include "collectors/quotas.h"
#include "io/file.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- quota-names.conf: rows and hints ------------------------------------ */

#define ROW_WORDS                                                                            \
    "kind tpm, tpd, rpm, input_tpm, output_tpm, concurrent or tpd_account; inference "       \
    "on-demand, cross-region, global, latency-optimized or any; an account-wide name without " \
    "{model}: 'tpd_account account'"

/* -2: not an inference word */
static int row_inference(const char *inf)
{
    if (!inf)
        return -2;
    if (!strcmp(inf, "any"))
        return -1;
    if (!strcmp(inf, "account"))
        return BT_QROW_ACCOUNT;
    int i = bt_inference_by_name(inf);
    return i < 0 || i == BT_INF_PROVISIONED ? -2 : i;
}

static int kind_by_name(const char *kind)
{
    for (int i = 0; kind && i < BT_Q_COUNT; i++)
        if (!strcmp(kind, bt_quota_kind_name((enum bt_quota_kind)i)))
            return i;
    return -1;
}

/* "Cross-Model Max Tokens Per Day = tpd_account account": a whole name, no {model}. */
static bool account_row(struct bt_quota_table *t, const char *key, const char *val, int lineno)
{
    char v[64];
    bt_strlcpy(v, val, sizeof v);
    char *save = NULL;
    const char *kind = strtok_r(v, " \t", &save), *inf = strtok_r(NULL, " \t", &save);
    if (kind_by_name(kind) != BT_Q_TPD_ACCOUNT || !inf || strcmp(inf, "account") != 0 ||
        strtok_r(NULL, " \t", &save))
        return false;
    struct bt_quota_row row;
    memset(&row, 0, sizeof row);
    if (strlen(key) >= sizeof row.prefix)
        return false;
    for (size_t i = 0; key[i]; i++)
        row.prefix[i] = (char)tolower((unsigned char)key[i]);
    row.kind = BT_Q_TPD_ACCOUNT;
    row.inference = BT_QROW_ACCOUNT;
    row.line = lineno;
    t->rows = bt_xrealloc(t->rows, (size_t)(t->nrows + 1) * sizeof *t->rows);
    t->rows[t->nrows++] = row;
    return true;
}

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
    int k = kind_by_name(kind);
    row.inference = row_inference(inf);
    if (k < 0 || row.inference == -2 || row.inference == BT_QROW_ACCOUNT ||
        k == BT_Q_TPD_ACCOUNT || (extra && strncmp(extra, "context=", 8) != 0) ||
        (extra && (!extra[8] || strlen(extra + 8) >= sizeof row.context)) ||
        strtok_r(NULL, " \t", &save)) {
        snprintf(err, errlen, "%s:%d: expected '<kind> <inference> [context=<label>]' (%s)", name,
                 lineno, ROW_WORDS);
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
    if (account_row(t, key, val, lineno))
        return true;
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


/* Model ID -> vendor tokens and model tokens. */
static void model_tokens(const char *model_id, struct toks *vendor, struct toks *model)
{
    char id[192];
    bt_strlcpy(id, bt_profile_strip(model_id), sizeof id);
    char *lo = strstr(id, "+latency-optimized");
    if (lo && !lo[18])
        *lo = '\0'; /* the latency profile is the quota's inference type, not its model */
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
    const char *bare = bt_profile_strip(model_id);
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
    if (row->inference == BT_QROW_ACCOUNT) {
        /* an account-wide name is the whole name */
        if (strspn(rest, " ") != strlen(rest))
            return false;
        memset(out, 0, sizeof *out);
        out->kind = row->kind;
        out->inference = row->inference;
        out->line = row->line;
        return true;
    }
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


/* ---- label keys: what the matcher's index is keyed by ---------------------- */

static uint64_t fnv(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (h ^ 0xff) * 1099511628211ull; /* a separator, so "ab"+"c" != "a"+"bc" */
}

static uint64_t toks_key(const struct toks *tk, int from)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = from; i < tk->n; i++)
        h = fnv(h, tk->t[i]);
    char v[24];
    snprintf(v, sizeof v, "v%ld", tk->version);
    return fnv(h, v);
}

int bt_quotas_display_keys(const char *display, uint64_t keys[BT_QKEYS])
{
    struct toks d;
    tokenize(display, &d);
    tok_finish(&d);
    if (d.overflow || d.n == 0)
        return 0;
    /* the whole label, then without a vendor of up to three tokens ("AI21 Labs":
     * ai 21 labs): a model ID's tokens never carry the vendor */
    int n = 0;
    for (int from = 0; from < d.n && n < BT_QKEYS; from++)
        keys[n++] = toks_key(&d, from);
    return n;
}

int bt_quotas_model_keys(const char *model_id, const struct bt_quota_table *t,
                         uint64_t keys[BT_QKEYS])
{
    const char *bare = bt_profile_strip(model_id);
    int n = 0;
    for (int i = 0; t && i < t->n && n < BT_QKEYS; i++) {
        if (fnmatch(t->h[i].pattern, bare, 0) != 0)
            continue;
        struct toks h;
        tokenize(t->h[i].name, &h);
        tok_finish(&h);
        if (!h.overflow && h.n)
            keys[n++] = toks_key(&h, 0);
    }
    if (n)
        return n; /* a hint replaces the derived name */
    struct toks vendor, model;
    model_tokens(model_id, &vendor, &model);
    if (model.overflow || model.n == 0)
        return 0;
    keys[0] = toks_key(&model, 0);
    return 1;
}
